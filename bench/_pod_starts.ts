/**
 * Pod starts as a recording CRI proxy saw them (tests/diff/_sides.ts), for the benches and
 * profiles that run kubelets on real containerd: the pod they start and when each started.
 */

import { shortMethod, type TraceEntry } from "../tests/diff/normalize.ts";
import type { Side } from "../tests/diff/_sides.ts";
import { pod } from "../tests/diff/scenarios.ts";

/** A pod whose one container sleeps until it is stopped. */
export const sleeper = (name: string): unknown =>
  pod(name, [{
    name: "app",
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 36000 & wait"],
  }]);

/**
 * Epoch ms at which each pod's first StartContainer returned (`out`) and its first
 * RunPodSandbox was sent (`out.sandboxSent`), by `namespace/name`, in one side's trace. A
 * StartContainer that failed (on an overloaded runtime it can pass its deadline while the
 * runtime still starts the container) counts once a relist shows that container running.
 * `out.inRuntime` is the time a pod's start spent inside its own RunPodSandbox,
 * CreateContainer and StartContainer calls (ms, until it counted as started): the part of a
 * pod start no kubelet can shorten; the rest is the kubelet's reaction and its work between
 * those calls. `out.callMs` lists those calls' durations by method, for every pod.
 */
export function startedAt(
  trace: TraceEntry[],
): Map<string, number> & {
  sandboxSent: Map<string, number>;
  inRuntime: Map<string, number>;
  callMs: Map<string, number[]>;
} {
  const sandboxPod = new Map<string, string>();
  const containerPod = new Map<string, string>();
  const failedStart = new Map<string, string>();
  const sandboxSent = new Map<string, number>();
  const inRuntime = new Map<string, number>();
  const callMs = new Map<string, number[]>();
  const out = Object.assign(new Map<string, number>(), {
    sandboxSent,
    inRuntime,
    callMs,
  });
  const spend = (pod: string, call: string, ms: number) => {
    if (out.has(pod)) return;
    inRuntime.set(pod, (inRuntime.get(pod) ?? 0) + ms);
    callMs.set(call, [...callMs.get(call) ?? [], ms]);
  };
  for (const e of trace) {
    const req = e.request ?? {};
    const res = e.response ?? {};
    const call = shortMethod(e.method);
    if (call === "RunPodSandbox") {
      const meta =
        (req.config as { metadata?: { name?: string; namespace?: string } })
          ?.metadata;
      if (meta?.name && typeof res.podSandboxId === "string") {
        const pod = `${meta.namespace}/${meta.name}`;
        sandboxPod.set(res.podSandboxId, pod);
        if (!sandboxSent.has(pod)) sandboxSent.set(pod, Date.parse(e.start));
        spend(pod, call, e.durationMs);
      }
    } else if (call === "CreateContainer") {
      const pod = sandboxPod.get(req.podSandboxId as string);
      if (pod && typeof res.containerId === "string") {
        containerPod.set(res.containerId, pod);
        spend(pod, call, e.durationMs);
      }
    } else if (call === "StartContainer") {
      const pod = containerPod.get(req.containerId as string);
      if (pod && !out.has(pod)) {
        spend(pod, call, e.durationMs);
        if (e.error === undefined) {
          out.set(pod, Date.parse(e.start) + e.durationMs);
        } else failedStart.set(req.containerId as string, pod);
      }
    } else if (call === "ListContainers" && failedStart.size) {
      const listed = (res.containers ?? []) as {
        id?: string;
        state?: unknown;
      }[];
      for (const c of listed) {
        const pod = c.id === undefined ? undefined : failedStart.get(c.id);
        if (pod && c.state === "CONTAINER_RUNNING" && !out.has(pod)) {
          out.set(pod, Date.parse(e.start) + e.durationMs);
        }
      }
    }
  }
  return out;
}

export async function waitStarted(
  side: Side,
  keys: string[],
  timeoutMs = 300_000,
): Promise<ReturnType<typeof startedAt>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const started = startedAt(await side.trace());
    if (keys.every((k) => started.has(k))) return started;
    if (Date.now() > deadline) {
      throw new Error(
        `${side.kind}: pods did not start within ${timeoutMs} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Calls per method whose start lies in [fromMs, toMs], by short method name. */
export function callsByMethod(
  trace: TraceEntry[],
  fromMs: number,
  toMs: number,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of trace) {
    const at = Date.parse(e.start);
    if (at < fromMs || at > toMs) continue;
    const method = shortMethod(e.method);
    counts.set(method, (counts.get(method) ?? 0) + 1);
  }
  return counts;
}
