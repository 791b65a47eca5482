/**
 * Container garbage collection (upstream `kuberuntime_gc.go`, run every minute by kubelet's
 * `StartGarbageCollection`): exited containers beyond the policy, sandboxes that hold nothing,
 * the content of pods that are gone, and their log directories. What may go is decided by pure
 * planners ({@linkcode planContainerGc}, {@linkcode planSandboxGc}) from a
 * {@linkcode PodStateProvider} (the pod workers); {@linkcode createContainerGc} only executes.
 *
 * @module
 */

import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { isNotFound, type RuntimeService } from "../runtime/mod.ts";
import { POD_UID_LABEL } from "./container_config.ts";
import { errorText } from "./pod_kill.ts";

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

/** Pod UID of a pod log directory name (`<namespace>_<name>_<uid>`; upstream's parser). */
export function podUidFromLogDirectory(name: string): string {
  const parts = name.split("_");
  return parts[parts.length - 1] ?? "";
}

/** File system effects of container GC. */
export interface GcFileSystem {
  /** Entry names of a directory; a missing directory is empty. */
  readDirNames(path: string): Promise<string[]>;
  /** Removes a file or a whole directory; missing is fine. */
  removeAll(path: string): Promise<void>;
}

/** The host file system. */
export const denoGcFileSystem: GcFileSystem = {
  async readDirNames(path) {
    try {
      const names: string[] = [];
      for await (const e of Deno.readDir(path)) names.push(e.name);
      return names;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
  },
  async removeAll(path) {
    try {
      await Deno.remove(path, { recursive: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  },
};

/** Dependencies of {@linkcode createContainerGc}. */
export interface ContainerGcDeps {
  runtime: Pick<
    RuntimeService,
    | "listContainers"
    | "listPodSandbox"
    | "containerStatus"
    | "stopContainer"
    | "removeContainer"
    | "stopPodSandbox"
    | "removePodSandbox"
  >;
  clock: Clock;
  logger: Logger;
  fs?: GcFileSystem;
}

/** Options of {@linkcode createContainerGc}. */
export interface ContainerGcOptions {
  policy?: ContainerGcPolicy;
  /** Root of pod log directories (`podLogsDir`). */
  podLogsDir: string;
  /** Kubelet root dir: `<rootDir>/pods/<uid>` of removed pods goes too. */
  rootDir?: string;
  /**
   * Which labelled runtime objects belong to this kubelet (default: every object with a pod UID
   * label). Tests sharing one runtime narrow it to their own pods.
   */
  owns?: (labels: Readonly<Record<string, string>>) => boolean;
}

/** Options of one {@linkcode ContainerGc.collect} pass. */
export interface CollectOptions {
  allSourcesReady: boolean;
  evictNonDeletedPods?: boolean;
  signal?: AbortSignal;
}

/** What one pass removed. */
export interface ContainerGcResult {
  containersRemoved: number;
  sandboxesRemoved: number;
  logDirectoriesRemoved: number;
  /** Failures (retried on the next pass). */
  errors: string[];
}

/** Container GC bound to a runtime. */
export interface ContainerGc {
  /** One pass (upstream `GarbageCollect`); per-object failures are listed, never thrown. */
  collect(
    states: PodStateProvider,
    options: CollectOptions,
  ): Promise<ContainerGcResult>;
}

const STATE_NAMES = ["created", "running", "exited", "unknown"] as const;

/** Creates the CRI-backed {@linkcode ContainerGc}. */
export function createContainerGc(
  deps: ContainerGcDeps,
  options: ContainerGcOptions,
): ContainerGc {
  const fs = deps.fs ?? denoGcFileSystem;
  const policy = options.policy ?? DEFAULT_CONTAINER_GC_POLICY;
  const owns = (labels: Readonly<Record<string, string>>) =>
    labels[POD_UID_LABEL] !== undefined &&
    (options.owns ? options.owns(labels) : true);

  async function listContainers(signal?: AbortSignal): Promise<GcContainer[]> {
    const { containers } = await deps.runtime.listContainers(
      {},
      signal ? { signal } : {},
    );
    return containers.filter((c) => owns(c.labels)).map((c) => ({
      id: c.id,
      uid: c.labels[POD_UID_LABEL]!,
      name: c.metadata?.name ?? "",
      sandboxId: c.podSandboxId,
      createdAt: Number(BigInt(c.createdAt) / 1_000_000n),
      state: STATE_NAMES[c.state] ?? "unknown",
    }));
  }

  return {
    async collect(states, pass) {
      const call = pass.signal ? { signal: pass.signal } : {};
      const result: ContainerGcResult = {
        containersRemoved: 0,
        sandboxesRemoved: 0,
        logDirectoriesRemoved: 0,
        errors: [],
      };
      const attempt = async (what: string, fn: () => Promise<unknown>) => {
        try {
          await fn();
          return true;
        } catch (error) {
          pass.signal?.throwIfAborted();
          if (isNotFound(error)) return true;
          result.errors.push(`${what}: ${errorText(error)}`);
          deps.logger.warn("Garbage collection failed", {
            err: `${what}: ${errorText(error)}`,
          });
          return false;
        }
      };

      const containers = await listContainers(pass.signal);
      const plan = planContainerGc(containers, policy, states, {
        now: deps.clock.now(),
        allSourcesReady: pass.allSourcesReady,
        ...(pass.evictNonDeletedPods ? { evictNonDeletedPods: true } : {}),
      });
      for (const { id, stopFirst } of plan) {
        if (
          stopFirst &&
          !await attempt(
            `stop container "${id}"`,
            () =>
              deps.runtime.stopContainer(
                { containerId: id, timeout: 0n },
                call,
              ),
          )
        ) continue;
        // upstream removeContainer: the log file and its rotations go first
        await attempt(`remove logs of container "${id}"`, async () => {
          const res = await deps.runtime.containerStatus(
            { containerId: id },
            call,
          );
          const path = res.status?.logPath ?? "";
          if (path) await removeWithRotations(fs, path);
        });
        if (
          await attempt(
            `remove container "${id}"`,
            () => deps.runtime.removeContainer({ containerId: id }, call),
          )
        ) result.containersRemoved++;
      }

      const left = await listContainers(pass.signal);
      const { items } = await deps.runtime.listPodSandbox({}, call);
      const sandboxes: GcSandbox[] = items.filter((s) => owns(s.labels)).map((
        s,
      ) => ({
        id: s.id,
        uid: s.labels[POD_UID_LABEL]!,
        createdAt: Number(BigInt(s.createdAt) / 1_000_000n),
        ready: s.state === 0,
      }));
      for (
        const id of planSandboxGc(sandboxes, left, states, {
          ...(pass.evictNonDeletedPods ? { evictNonDeletedPods: true } : {}),
        })
      ) {
        // a sandbox GC removes should be stopped already; stop it anyway, as upstream does
        if (
          await attempt(
            `stop sandbox "${id}"`,
            () => deps.runtime.stopPodSandbox({ podSandboxId: id }, call),
          ) &&
          await attempt(
            `remove sandbox "${id}"`,
            () => deps.runtime.removePodSandbox({ podSandboxId: id }, call),
          )
        ) result.sandboxesRemoved++;
      }

      if (pass.allSourcesReady) {
        // upstream evictPodLogsDirectories
        for (const name of await fs.readDirNames(options.podLogsDir)) {
          const uid = podUidFromLogDirectory(name);
          if (!uid || !states.shouldPodContentBeRemoved(uid)) continue;
          if (
            await attempt(
              `remove pod log directory "${name}"`,
              () => fs.removeAll(`${options.podLogsDir}/${name}`),
            )
          ) result.logDirectoriesRemoved++;
        }
        if (options.rootDir) {
          await removePodDirectories(fs, options.rootDir, states, {
            inUse: new Set(left.map((c) => c.uid)),
            attempt,
          });
        }
      }
      if (
        result.containersRemoved + result.sandboxesRemoved +
            result.logDirectoriesRemoved > 0
      ) {
        deps.logger.v(2).info("Garbage collected containers", {
          containers: result.containersRemoved,
          sandboxes: result.sandboxesRemoved,
          logDirectories: result.logDirectoriesRemoved,
        });
      }
      return result;
    },
  };
}

/** Removes a CRI log file and its rotated siblings (`<file>.*`; upstream `logManager.Clean`). */
async function removeWithRotations(
  fs: GcFileSystem,
  path: string,
): Promise<void> {
  const slash = path.lastIndexOf("/");
  const dir = slash > 0 ? path.slice(0, slash) : "/";
  const base = path.slice(slash + 1);
  for (const name of await fs.readDirNames(dir)) {
    if (name === base || name.startsWith(`${base}.`)) {
      await fs.removeAll(`${dir}/${name}`);
    }
  }
}

/**
 * `<rootDir>/pods/<uid>` (termination-message files) of pods whose content may go and that no
 * container refers to any more (upstream's orphaned pod directory clean-up in housekeeping).
 */
async function removePodDirectories(
  fs: GcFileSystem,
  rootDir: string,
  states: PodStateProvider,
  ctx: {
    inUse: ReadonlySet<string>;
    attempt: (what: string, fn: () => Promise<unknown>) => Promise<boolean>;
  },
): Promise<void> {
  const podsDir = `${rootDir}/pods`;
  for (const uid of await fs.readDirNames(podsDir)) {
    if (ctx.inUse.has(uid) || !states.shouldPodContentBeRemoved(uid)) continue;
    await ctx.attempt(
      `remove pod directory "${uid}"`,
      () => fs.removeAll(`${podsDir}/${uid}`),
    );
  }
}
