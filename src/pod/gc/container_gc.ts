/**
 * Container garbage collection (upstream `kuberuntime_gc.go`, run every minute by kubelet's
 * `StartGarbageCollection`): exited containers beyond the policy, sandboxes that hold nothing,
 * the content of pods that are gone, and their log directories. What may go is decided by pure
 * planners ({@linkcode planContainerGc}, {@linkcode planSandboxGc}) from a
 * {@linkcode PodStateProvider} (the pod workers); {@linkcode createContainerGc} only executes.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { MEMORY_DIR_ROOT_PREFIX } from "../../volume/mod.ts";
import { isNotFound, type RuntimeService } from "../../runtime/mod.ts";
import {
  CONTAINER_NAME_LABEL,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_UID_LABEL,
} from "../runtime_labels.ts";
import type { ContainerLogLinks } from "../logs/container_log_links.ts";

export {
  CONTAINER_GC_PERIOD_MS,
  type ContainerGcPolicy,
  type ContainerRemoval,
  DEFAULT_CONTAINER_GC_POLICY,
  type GcContainer,
  type GcSandbox,
  planContainerGc,
  type PlanContainerOptions,
  planSandboxGc,
  type PodStateProvider,
  podUidFromLogDirectory,
} from "./container_gc_plan.ts";
import {
  type ContainerGcPolicy,
  DEFAULT_CONTAINER_GC_POLICY,
  type GcContainer,
  type GcSandbox,
  planContainerGc,
  type PlanContainerOptions,
  planSandboxGc,
  type PodStateProvider,
  podUidFromLogDirectory,
} from "./container_gc_plan.ts";
import { errorMessage } from "../../util/error_message.ts";

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
  /** `/var/log/containers` links: removed with their container, dead ones swept. */
  logLinks?: Pick<ContainerLogLinks, "remove" | "removeStale">;
  /**
   * Unmounts the tmpfs of a pod's memory-backed volumes before its directory under
   * `<rootDir>/pods` goes (a mounted one would be emptied, then refuse removal).
   */
  releaseVolumes?: (uid: string) => Promise<void>;
}

/** Options of {@linkcode createContainerGc}. */
export interface ContainerGcOptions {
  policy?: ContainerGcPolicy;
  /** Root of pod log directories (`podLogsDir`). */
  podLogsDir: string;
  /** Kubelet root dir: `<rootDir>/pods/<uid>` of removed pods goes too. */
  rootDir?: string;
  /**
   * Directory of memory-backed emptyDirs (`<dir>/<uid>`): those of removed pods go too, so a
   * pod the kubelet never saw terminate (it was down) leaves no data in RAM.
   */
  memoryVolumeDir?: string;
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

/** One pass's bookkeeping: results and the per-object failure handler. */
class GcPass {
  readonly result: ContainerGcResult = {
    containersRemoved: 0,
    sandboxesRemoved: 0,
    logDirectoriesRemoved: 0,
    errors: [],
  };
  readonly call: { signal?: AbortSignal };
  #logger: Logger;
  #signal: AbortSignal | undefined;

  constructor(logger: Logger, signal: AbortSignal | undefined) {
    this.#logger = logger;
    this.#signal = signal;
    this.call = signal ? { signal } : {};
  }

  /** Runs one removal step; NotFound counts as done, other failures are listed. */
  async attempt(what: string, fn: () => Promise<unknown>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (error) {
      this.#signal?.throwIfAborted();
      if (isNotFound(error)) return true;
      const text = `${what}: ${errorMessage(error)}`;
      this.result.errors.push(text);
      this.#logger.warn("Garbage collection failed", { err: text });
      return false;
    }
  }
}

class CriContainerGc implements ContainerGc {
  #deps: ContainerGcDeps;
  #options: ContainerGcOptions;
  #fs: GcFileSystem;
  #policy: ContainerGcPolicy;

  constructor(deps: ContainerGcDeps, options: ContainerGcOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#fs = deps.fs ?? denoGcFileSystem;
    this.#policy = options.policy ?? DEFAULT_CONTAINER_GC_POLICY;
  }

  #owns(labels: Readonly<Record<string, string>>): boolean {
    return labels[POD_UID_LABEL] !== undefined &&
      (this.#options.owns ? this.#options.owns(labels) : true);
  }

  async #listContainers(pass: GcPass): Promise<GcContainer[]> {
    const { containers } = await this.#deps.runtime.listContainers(
      {},
      pass.call,
    );
    return containers.filter((c) => this.#owns(c.labels)).map((c) => ({
      id: c.id,
      uid: c.labels[POD_UID_LABEL]!,
      name: c.metadata?.name ?? "",
      sandboxId: c.podSandboxId,
      createdAt: Number(BigInt(c.createdAt) / 1_000_000n),
      state: STATE_NAMES[c.state] ?? "unknown",
    }));
  }

  async collect(
    states: PodStateProvider,
    options: CollectOptions,
  ): Promise<ContainerGcResult> {
    const pass = new GcPass(this.#deps.logger, options.signal);
    const evictNonDeletedPods = options.evictNonDeletedPods === true;
    await this.#evictContainers(pass, states, {
      now: this.#deps.clock.now(),
      allSourcesReady: options.allSourcesReady,
      ...(evictNonDeletedPods ? { evictNonDeletedPods } : {}),
    });
    const left = await this.#listContainers(pass);
    await this.#evictSandboxes(pass, states, left, evictNonDeletedPods);
    if (options.allSourcesReady) {
      await this.#evictPodLogDirectories(pass, states);
      await this.#removeDeadLogLinks(pass);
      const dirs = [
        ...(this.#options.rootDir ? [`${this.#options.rootDir}/pods`] : []),
        ...(this.#options.memoryVolumeDir
          ? [this.#options.memoryVolumeDir]
          : []),
      ];
      for (const podsDir of dirs) {
        const release = podsDir === dirs[0] && this.#options.rootDir
          ? this.#deps.releaseVolumes
          : undefined;
        await removePodDirectories(this.#fs, podsDir, states, {
          inUse: new Set(left.map((c) => c.uid)),
          attempt: (what, fn) => pass.attempt(what, fn),
          ...(release ? { release } : {}),
        });
      }
    }
    const r = pass.result;
    if (r.containersRemoved + r.sandboxesRemoved + r.logDirectoriesRemoved) {
      this.#deps.logger.v(2).info("Garbage collected containers", {
        containers: r.containersRemoved,
        sandboxes: r.sandboxesRemoved,
        logDirectories: r.logDirectoriesRemoved,
      });
    }
    return r;
  }

  /** Upstream `evictContainers` + `removeContainer` (logs first, then the container). */
  async #evictContainers(
    pass: GcPass,
    states: PodStateProvider,
    plan: PlanContainerOptions,
  ): Promise<void> {
    const { runtime } = this.#deps;
    const containers = await this.#listContainers(pass);
    for (
      const { id, stopFirst } of planContainerGc(
        containers,
        this.#policy,
        states,
        plan,
      )
    ) {
      if (
        stopFirst && !await pass.attempt(
          `stop container "${id}"`,
          () =>
            runtime.stopContainer({ containerId: id, timeout: 0n }, pass.call),
        )
      ) continue;
      await pass.attempt(`remove logs of container "${id}"`, async () => {
        const res = await runtime.containerStatus(
          { containerId: id },
          pass.call,
        );
        const path = res.status?.logPath ?? "";
        if (path) await removeWithRotations(this.#fs, path);
        const labels = res.status?.labels ?? {};
        await this.#deps.logLinks?.remove({
          podName: labels[POD_NAME_LABEL] ?? "",
          podNamespace: labels[POD_NAMESPACE_LABEL] ?? "",
          containerName: labels[CONTAINER_NAME_LABEL] ?? "",
          containerId: id,
        });
      });
      if (
        await pass.attempt(
          `remove container "${id}"`,
          () => runtime.removeContainer({ containerId: id }, pass.call),
        )
      ) pass.result.containersRemoved++;
    }
  }

  /** Upstream `evictSandboxes`; a sandbox is stopped before removal, as upstream does. */
  async #evictSandboxes(
    pass: GcPass,
    states: PodStateProvider,
    containers: readonly GcContainer[],
    evictNonDeletedPods: boolean,
  ): Promise<void> {
    const { runtime } = this.#deps;
    const { items } = await runtime.listPodSandbox({}, pass.call);
    const sandboxes: GcSandbox[] = items.filter((s) => this.#owns(s.labels))
      .map((s) => ({
        id: s.id,
        uid: s.labels[POD_UID_LABEL]!,
        createdAt: Number(BigInt(s.createdAt) / 1_000_000n),
        ready: s.state === 0,
      }));
    const plan = planSandboxGc(sandboxes, containers, states, {
      ...(evictNonDeletedPods ? { evictNonDeletedPods } : {}),
    });
    for (const id of plan) {
      if (
        await pass.attempt(
          `stop sandbox "${id}"`,
          () => runtime.stopPodSandbox({ podSandboxId: id }, pass.call),
        ) &&
        await pass.attempt(
          `remove sandbox "${id}"`,
          () => runtime.removePodSandbox({ podSandboxId: id }, pass.call),
        )
      ) pass.result.sandboxesRemoved++;
    }
  }

  /**
   * The dead-link part of upstream `evictPodLogsDirectories`: a link whose log file is gone
   * goes unless its container is still there and not exited.
   */
  async #removeDeadLogLinks(pass: GcPass): Promise<void> {
    const links = this.#deps.logLinks;
    if (!links) return;
    await pass.attempt(
      "remove dead container log links",
      () =>
        links.removeStale(async (containerId) => {
          try {
            const res = await this.#deps.runtime.containerStatus(
              { containerId },
              pass.call,
            );
            return res.status !== undefined && res.status.state !== 2;
          } catch {
            return false;
          }
        }),
    );
  }

  /** Upstream `evictPodLogsDirectories`: directories of pods whose content may go. */
  async #evictPodLogDirectories(
    pass: GcPass,
    states: PodStateProvider,
  ): Promise<void> {
    const dir = this.#options.podLogsDir;
    for (const name of await this.#fs.readDirNames(dir)) {
      const uid = podUidFromLogDirectory(name);
      if (!uid || !states.shouldPodContentBeRemoved(uid)) continue;
      if (
        await pass.attempt(
          `remove pod log directory "${name}"`,
          () => this.#fs.removeAll(`${dir}/${name}`),
        )
      ) pass.result.logDirectoriesRemoved++;
    }
  }
}

/** Creates the CRI-backed {@linkcode ContainerGc}. */
export function createContainerGc(
  deps: ContainerGcDeps,
  options: ContainerGcOptions,
): ContainerGc {
  return new CriContainerGc(deps, options);
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
 * `<podsDir>/<uid>` (`<rootDir>/pods`: termination-message files, volumes; the memory volume
 * dir) of pods whose content may go and that no container refers to any more (upstream's
 * orphaned pod directory clean-up in housekeeping).
 */
async function removePodDirectories(
  fs: GcFileSystem,
  podsDir: string,
  states: PodStateProvider,
  ctx: {
    inUse: ReadonlySet<string>;
    attempt: (what: string, fn: () => Promise<unknown>) => Promise<boolean>;
    release?: (uid: string) => Promise<void>;
  },
): Promise<void> {
  for (const uid of await fs.readDirNames(podsDir)) {
    // another kubelet's memory directory on this host, not a pod of ours
    if (uid.startsWith(MEMORY_DIR_ROOT_PREFIX)) continue;
    if (ctx.inUse.has(uid) || !states.shouldPodContentBeRemoved(uid)) continue;
    await ctx.attempt(
      `remove pod directory "${uid}"`,
      async () => {
        await ctx.release?.(uid);
        // a recursive removal through a CSI volume still published would delete its data
        const csi = `${podsDir}/${uid}/volumes/kubernetes.io~csi`;
        if ((await fs.readDirNames(csi)).length > 0) {
          throw new Error(
            `${csi} still holds CSI volumes: the directory stays until they are unpublished`,
          );
        }
        await fs.removeAll(`${podsDir}/${uid}`);
      },
    );
  }
}
