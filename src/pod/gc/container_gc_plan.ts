/**
 * Container GC decisions (upstream `kuberuntime_gc.go`), pure: which exited containers and
 * which sandboxes go, given the policy and what the pod workers say about each pod UID.
 * {@linkcode createContainerGc} in `container_gc.ts` executes them.
 *
 * @module
 */

/** Upstream `ContainerGCPeriod`. */
export const CONTAINER_GC_PERIOD_MS = 60_000;

/**
 * Upstream `GCPolicy`, from `--minimum-container-ttl-duration` (0),
 * `--maximum-dead-containers-per-container` (1) and `--maximum-dead-containers` (-1).
 */
export interface ContainerGcPolicy {
  /** Exited containers younger than this (since creation) are kept. */
  minAgeMs: number;
  /** Dead instances kept per pod and container name; negative: no limit. */
  maxPerPodContainer: number;
  /** Dead containers kept on the node; negative: no limit. */
  maxContainers: number;
}

/** The defaults of {@linkcode ContainerGcPolicy}. */
export const DEFAULT_CONTAINER_GC_POLICY: ContainerGcPolicy = {
  minAgeMs: 0,
  maxPerPodContainer: 1,
  maxContainers: -1,
};

/** What GC asks about a pod UID (upstream `PodStateProvider`; the pod workers answer). */
export interface PodStateProvider {
  /** Evicted, or deleted and stopped, or unknown once every source reported. */
  shouldPodContentBeRemoved(uid: string): boolean;
  /** Stopped, or unknown once every source reported. */
  shouldPodRuntimeBeRemoved(uid: string): boolean;
}

/** A container as GC sees it. */
export interface GcContainer {
  id: string;
  uid: string;
  name: string;
  sandboxId: string;
  /** ms since the epoch. */
  createdAt: number;
  state: "created" | "running" | "exited" | "unknown";
}

/** A sandbox as GC sees it. */
export interface GcSandbox {
  id: string;
  uid: string;
  createdAt: number;
  ready: boolean;
}

/** One container GC decision. */
export interface ContainerRemoval {
  id: string;
  /** Unknown state: stop it before removing (upstream kills such containers first). */
  stopFirst: boolean;
}

/** Options of {@linkcode planContainerGc}. */
export interface PlanContainerOptions {
  now: number;
  /** Pods of deleted pods are emptied only once every source has reported. */
  allSourcesReady: boolean;
  /** Disk pressure: also empty pods that stopped but are not deleted. */
  evictNonDeletedPods?: boolean;
}

function newestFirst<T extends { createdAt: number }>(a: T, b: T): number {
  return b.createdAt - a.createdAt;
}

/**
 * Upstream `evictContainers`: groups the evictable containers (not running, older than
 * `minAgeMs`) by pod UID and container name; removes whole groups of pods whose content may go,
 * then the oldest beyond `maxPerPodContainer` per group, then, above `maxContainers`, trims
 * every group to an equal share (at least 1) and finally the oldest node-wide.
 */
export function planContainerGc(
  containers: readonly GcContainer[],
  policy: ContainerGcPolicy,
  states: PodStateProvider,
  options: PlanContainerOptions,
): ContainerRemoval[] {
  const removals: ContainerRemoval[] = [];
  const drop = (c: GcContainer) =>
    removals.push({ id: c.id, stopFirst: c.state === "unknown" });
  const units = new Map<string, GcContainer[]>();
  for (const c of containers) {
    if (c.state === "running") continue;
    if (options.now - c.createdAt < policy.minAgeMs) continue;
    const key = `${c.uid}\u0000${c.name}`;
    units.set(key, [...(units.get(key) ?? []), c]);
  }
  for (const unit of units.values()) unit.sort(newestFirst);

  if (options.allSourcesReady) {
    for (const [key, unit] of units) {
      const uid = unit[0]!.uid;
      if (
        states.shouldPodContentBeRemoved(uid) ||
        (options.evictNonDeletedPods && states.shouldPodRuntimeBeRemoved(uid))
      ) {
        unit.forEach(drop);
        units.delete(key);
      }
    }
  }
  const trimTo = (keep: number) => {
    for (const [key, unit] of units) {
      for (const c of unit.slice(Math.max(0, keep))) drop(c);
      units.set(key, unit.slice(0, Math.max(0, keep)));
    }
  };
  if (policy.maxPerPodContainer >= 0) trimTo(policy.maxPerPodContainer);
  const count = () => [...units.values()].reduce((n, u) => n + u.length, 0);
  if (policy.maxContainers >= 0 && count() > policy.maxContainers) {
    trimTo(Math.max(1, Math.floor(policy.maxContainers / units.size)));
    const left = [...units.values()].flat().sort(newestFirst);
    for (const c of left.slice(policy.maxContainers)) drop(c);
  }
  return removals;
}

/**
 * Upstream `evictSandboxes`: a sandbox is active while ready or while a container still refers
 * to it. Per pod UID: all inactive sandboxes go when the pod's content may go (or, under disk
 * pressure, its runtime), otherwise all but the newest.
 */
export function planSandboxGc(
  sandboxes: readonly GcSandbox[],
  containers: readonly GcContainer[],
  states: PodStateProvider,
  options: { evictNonDeletedPods?: boolean } = {},
): string[] {
  const used = new Set(containers.map((c) => c.sandboxId));
  const byPod = new Map<string, GcSandbox[]>();
  for (const s of sandboxes) byPod.set(s.uid, [...(byPod.get(s.uid) ?? []), s]);
  const out: string[] = [];
  for (const [uid, list] of byPod) {
    list.sort(newestFirst);
    const all = states.shouldPodContentBeRemoved(uid) ||
      (options.evictNonDeletedPods === true &&
        states.shouldPodRuntimeBeRemoved(uid));
    for (const s of all ? list : list.slice(1)) {
      if (!s.ready && !used.has(s.id)) out.push(s.id);
    }
  }
  return out;
}

/**
 * Pod UID of a pod log directory name (`<namespace>_<name>_<uid>`; upstream's parser), or ""
 * for a dot name: no namespace starts with a dot, and a dot directory (tests keep their
 * container log links in `.containers` there) is never a pod's.
 */
export function podUidFromLogDirectory(name: string): string {
  if (name.startsWith(".")) return "";
  const parts = name.split("_");
  return parts[parts.length - 1] ?? "";
}
