/**
 * The node's CPU time and memory working set from the root cgroup, as cAdvisor's root
 * container gives them to upstream's `/metrics/resource`, `/metrics/cadvisor` and
 * `/stats/summary`: cgroup v1 `cpuacct.usage`, `memory.usage_in_bytes` less
 * `total_inactive_file`; cgroup v2 `cpu.stat` `usage_usec`, the machine's used memory less the
 * root `memory.stat` `inactive_file`. The files are read directly (every permission) or
 * through the cgroup agent, which allows exactly these.
 *
 * @module
 */

import type { CgroupTreeFs } from "../cgroup_agent/mod.ts";
import type { RootUsage } from "../server/mod.ts";
import { statValue, workingSet } from "../util/cgroup_stat.ts";

const MOUNT = "/sys/fs/cgroup";

/**
 * What the node used, when it was read. On cgroup v1 rss is the hierarchy's total and the
 * fault counters the cgroup's own (cAdvisor reads `pgfault`, never `total_pgfault`).
 */
export type NodeUsage = Omit<RootUsage, "cpuNanoCores">;

/** The `memory.stat` keys cAdvisor reads for rss and faults, by cgroup version. */
const STAT_KEYS = {
  v1: {
    memoryRssBytes: "total_rss",
    memoryPageFaults: "pgfault",
    memoryMajorPageFaults: "pgmajfault",
  },
  v2: {
    memoryRssBytes: "anon",
    memoryPageFaults: "pgfault",
    memoryMajorPageFaults: "pgmajfault",
  },
} as const;

/** The rss and fault counters of a root `memory.stat`; absent keys are left out. */
export function memoryCounters(
  stat: string,
  version: "v1" | "v2",
): Pick<
  NodeUsage,
  "memoryRssBytes" | "memoryPageFaults" | "memoryMajorPageFaults"
> {
  const out: Record<string, number> = {};
  for (const [field, key] of Object.entries(STAT_KEYS[version])) {
    const v = statValue(stat, key);
    if (v !== undefined) out[field] = v;
  }
  return out;
}

/** Where the node's figures come from. */
export interface NodeUsageSource {
  fs: Pick<CgroupTreeFs, "exists" | "readTextFile">;
  /** The machine's memory (total and free bytes). */
  memory(): { total: number; free: number };
  now(): number;
}

/** The node's usage now; a figure whose file cannot be read is left out. */
export async function readNodeUsage(
  source: NodeUsageSource,
): Promise<NodeUsage> {
  const { fs } = source;
  const read = (path: string) => fs.readTextFile(path).catch(() => undefined);
  const out: NodeUsage = { timeMs: source.now() };
  if (await fs.exists(`${MOUNT}/cgroup.controllers`).catch(() => false)) {
    const [cpu, stat] = await Promise.all([
      read(`${MOUNT}/cpu.stat`),
      read(`${MOUNT}/memory.stat`),
    ]);
    const usec = cpu === undefined ? undefined : statValue(cpu, "usage_usec");
    if (usec !== undefined) out.cpuCoreNanoSeconds = usec * 1000;
    const m = source.memory();
    out.memoryUsageBytes = m.total - m.free;
    const inactive = stat === undefined
      ? undefined
      : statValue(stat, "inactive_file");
    if (inactive !== undefined) {
      out.memoryWorkingSetBytes = workingSet(out.memoryUsageBytes, inactive);
    }
    return stat === undefined ? out : { ...out, ...memoryCounters(stat, "v2") };
  }
  const [cpu, usage, stat] = await Promise.all([
    read(`${MOUNT}/cpuacct/cpuacct.usage`),
    read(`${MOUNT}/memory/memory.usage_in_bytes`),
    read(`${MOUNT}/memory/memory.stat`),
  ]);
  if (cpu !== undefined && /^\d+$/.test(cpu.trim())) {
    out.cpuCoreNanoSeconds = Number(cpu.trim());
  }
  if (usage !== undefined && /^\d+$/.test(usage.trim())) {
    out.memoryUsageBytes = Number(usage.trim());
    const inactive = stat === undefined
      ? undefined
      : statValue(stat, "total_inactive_file");
    if (inactive !== undefined) {
      out.memoryWorkingSetBytes = workingSet(out.memoryUsageBytes, inactive);
    }
  }
  return stat === undefined ? out : { ...out, ...memoryCounters(stat, "v1") };
}
