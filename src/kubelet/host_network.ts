/**
 * The node's network interfaces as cAdvisor's root container lists them for upstream's
 * `/stats/summary`: the kernel's counters of the host network namespace (`/proc/net/dev`),
 * without loopback, veth and docker/nerdctl bridges, which cAdvisor ignores.
 *
 * @module
 */

import type { InterfaceCounters } from "../server/mod.ts";

/** Interface name prefixes cAdvisor leaves out of a container's network stats. */
const IGNORED_PREFIXES = ["lo", "veth", "docker", "nerdctl"];

/**
 * The interfaces of a `/proc/net/dev` text, in its order. Receive columns come first
 * (bytes, packets, errs, …, 8 of them), then transmit (bytes, packets, errs, …).
 */
export function parseNetDev(text: string): InterfaceCounters[] {
  const out: InterfaceCounters[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    const [, name, rest] = m as unknown as [string, string, string];
    const f = rest.trim().split(/\s+/).map(Number);
    if (f.length < 16 || f.some((n) => !Number.isFinite(n))) continue;
    if (IGNORED_PREFIXES.some((p) => name.startsWith(p))) continue;
    out.push({
      name,
      rxBytes: f[0]!,
      rxErrors: f[2]!,
      txBytes: f[8]!,
      txErrors: f[10]!,
    });
  }
  return out;
}

/** The host's interfaces now; undefined when `/proc/net/dev` cannot be read. */
export async function readHostNetwork(
  fs: { readTextFile(path: string): Promise<string> },
  now: () => number,
): Promise<{ timeMs: number; interfaces: InterfaceCounters[] } | undefined> {
  try {
    const text = await fs.readTextFile("/proc/net/dev");
    return { timeMs: now(), interfaces: parseNetDev(text) };
  } catch {
    return undefined;
  }
}
