/**
 * Wiring of the standalone kubelet: static pod sources → pod config → sync loop (pod manager,
 * pod workers driving the pod syncer) ← PLEG. No business logic lives here.
 *
 * `createKubelet(deps, options)` builds the pieces from injected dependencies (tests pass the
 * simulated runtime and a fake clock); `run_kubelet.ts` turns a parsed configuration into those
 * dependencies.
 *
 * @module
 */

import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { Node, Pod, PodApi } from "../api/mod.ts";
import {
  type AllocationManager,
  CONTAINER_GC_PERIOD_MS,
  type ContainerGc,
  createApiSource,
  createFileSource,
  createHttpSource,
  createProber,
  type ImageGc,
  LoopEventQueue,
  Pleg,
  type PodAdmission,
  PodConfig,
  type PodEventRecorder,
  type PodSource,
  type PodSyncer,
  PodSyncHandler,
  type PodUpdate,
  PodWorkers,
  predicateAdmitter,
  type ProbeConnect,
  type ProbeResults,
  type ResizeEnvironment,
  runImageGc,
  type RunningPod,
  runSyncLoop,
  type SyncLoopActivity,
  SyncLoopMonitor,
} from "../pod/mod.ts";
import type { RuntimeService } from "../runtime/mod.ts";
import {
  type PodStatusManager,
  PodStatusSync,
  type StatusTarget,
} from "../status/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import { milliValue, quantityValue } from "../util/quantity.ts";

/** What the prober needs; omitted → no probes run. */
export interface KubeletProbeDeps {
  /** Runs exec probes (CRI `ExecSync`). */
  runtime: Pick<RuntimeService, "execSync">;
  /** The pod status cache the syncer writes: pods, container ids, states, start times. */
  statuses: Pick<PodStatusManager, "getPodStatus" | "onChange">;
  /** The result maps the syncer reads (the same object given to `createPodSyncer`). */
  results: ProbeResults;
  /** For HTTP probes (default `podFetch`: HTTPS without certificate checks, as upstream). */
  fetch?: typeof fetch;
  /** For TCP probes (default `Deno.connect`). */
  connect?: ProbeConnect;
  /** `Unhealthy` events of failed probes; omitted → none. */
  events?: PodEventRecorder;
}

/** API server mode: the pods bound to the node and their statuses; omitted → standalone. */
export interface KubeletClusterDeps {
  pods: PodApi;
  /** The status cache whose statuses are written to the API server. */
  statuses: Pick<PodStatusManager, "allStatuses" | "onChange">;
  /** A static pod's mirror pod (where its status goes); from the mirror pod manager. */
  mirrorPodOf?: (pod: Pod) => StatusTarget | undefined;
  /** The node's mirror pods as the API server source sees them. */
  onMirrorPods?: (pods: Pod[]) => void;
  /** Status resync period (default 10 s). */
  statusSyncPeriodMs?: number;
  /**
   * The Node as last read or written: with it, predicate admission (resources, affinity, OS,
   * ports, taints) runs after `KubeletDeps.admission`, which then must be given (its `reject`
   * records the refusal).
   */
  node?: () => Node | undefined;
  /** Sees every pod update (the ConfigMap/Secret manager registers the pods' objects). */
  onPodUpdate?: (update: PodUpdate) => void;
}

/** Dependencies of {@linkcode createKubelet}. */
export interface KubeletDeps {
  /** Used by the PLEG to relist sandboxes and containers. */
  runtime: Pick<RuntimeService, "listPodSandbox" | "listContainers">;
  /** Executes pod work (`createPodSyncer` in src/pod). */
  syncer: PodSyncer;
  /**
   * The runtime's running pods; housekeeping stops those no pod worker knows (orphans).
   * Omitted → orphans are left alone (tests that share a runtime).
   */
  listRunningPods?: () => Promise<RunningPod[]>;
  /** The kubelet's cgroups, kept by housekeeping (QoS tiers, orphaned pod cgroups). */
  podCgroups?: {
    housekeeping(
      activePods: readonly Pod[],
      known: (uid: string) => boolean,
    ): Promise<void>;
  };
  /** The pods' user namespace ranges; housekeeping frees those of unknown pods. */
  userNamespaces?: {
    cleanupOrphans(known: (uid: string) => boolean): Promise<void>;
  };
  /** Container GC, run every `containerGcPeriodMs` with the pod workers as state provider. */
  containerGc?: ContainerGc;
  /** Image GC, run now and every `imageGcPeriodMs`; omitted → images are never removed. */
  imageGc?: {
    gc: ImageGc;
    /** Records a Warning event on the Node (`ImageGCFailed` …). */
    warn?: (reason: string, message: string) => void;
  };
  /** The runtime status the syncer keeps per pod; voided by the PLEG's events for the pod. */
  runtimeCache?: { invalidate(uid: string): void };
  /** The status cache; housekeeping drops statuses of pods that are gone. */
  statuses?: Pick<PodStatusManager, "allStatuses" | "removePod">;
  /** Admission of new pods (sysctls); omitted → every pod is admitted. */
  admission?: PodAdmission;
  /** Devices a pod already holds, raising allocatable in the predicates (the device manager). */
  pluginResources?: (pod: Pod) => ReadonlyMap<string, number>;
  /** In-place resize's allocations (the syncer's too); omitted → pods are never resized. */
  allocations?: AllocationManager;
  clock: Clock;
  logger: Logger;
  /** For the HTTP source (tests). */
  fetch?: typeof fetch;
  /** Container probes (liveness, readiness, startup). */
  probes?: KubeletProbeDeps;
  /** API server mode (pod source "api" and the status manager's API half). */
  cluster?: KubeletClusterDeps;
}

/** Options of {@linkcode createKubelet} (already parsed; durations in ms). */
export interface KubeletOptions {
  nodeName: string;
  staticPodPath?: string;
  staticPodURL?: string;
  staticPodURLHeader?: Record<string, string[]>;
  fileCheckFrequencyMs?: number;
  httpCheckFrequencyMs?: number;
  syncFrequencyMs?: number;
  /** Error back-off of the pod workers (default 10 s). */
  backOffPeriodMs?: number;
  runtimeRequestTimeoutMs?: number;
  /** Watch the manifest directory with `Deno.watchFs` (default true). */
  watchManifests?: boolean;
  /** Jitter source of the pod workers (tests pass `() => 0`). */
  random?: () => number;
  /** Container GC period (default 1 min, upstream `ContainerGCPeriod`). */
  containerGcPeriodMs?: number;
  /** Image GC period (default 5 min, upstream `ImageGCPeriod`). */
  imageGcPeriodMs?: number;
}

/** A wired standalone kubelet. */
export interface Kubelet extends AsyncDisposable {
  /** Starts sources, PLEG and the sync loop. */
  start(): void;
  /** Lists every source once now and queues the resulting updates. */
  refreshSources(): Promise<void>;
  /** One PLEG relist now (its events are queued). */
  relist(): Promise<void>;
  /** Resolves when the loop queue is drained and no pod worker is running. */
  whenIdle(): Promise<void>;
  /** Stops everything (containers keep running). Safe to call twice. */
  stop(): Promise<void>;
  readonly podConfig: PodConfig;
  readonly workers: PodWorkers;
  readonly handler: PodSyncHandler;
  readonly pleg: Pleg;
  /** When the sync loop last iterated (the `syncloop` health check reads it). */
  readonly syncLoop: SyncLoopActivity;
}

/** Builds the standalone kubelet from its dependencies. */
export function createKubelet(
  deps: KubeletDeps,
  options: KubeletOptions,
): Kubelet {
  const { clock, logger } = deps;
  const queue = new LoopEventQueue();
  const monitor = new SyncLoopMonitor();
  const sourceNames: string[] = [];
  if (options.staticPodPath) sourceNames.push("file");
  if (options.staticPodURL) sourceNames.push("http");
  if (deps.cluster) sourceNames.push("api");
  const podConfig = new PodConfig({ clock }, {
    sources: sourceNames,
    onUpdate: (update) => {
      deps.cluster?.onPodUpdate?.(update);
      queue.push({ kind: "config", update });
    },
  });
  const workers = new PodWorkers(
    {
      syncer: deps.syncer,
      clock,
      logger: logger.with({ component: "pod-workers" }),
    },
    {
      resyncIntervalMs: options.syncFrequencyMs ?? 60_000,
      backOffPeriodMs: options.backOffPeriodMs ?? 10_000,
      ...(options.random ? { random: options.random } : {}),
    },
  );
  const prober = deps.probes
    ? createProber({
      ...deps.probes,
      clock,
      logger: logger.with({ component: "prober" }),
    }, {
      onResult: (change) =>
        queue.push({ kind: "probe", podUid: change.podUid }),
      ...(options.random ? { random: options.random } : {}),
    })
    : undefined;
  const allocations = deps.allocations;
  const allocatedPods = () =>
    allocations
      ? handler.pods().map((p) => allocations.allocatedPod(p))
      : handler.pods();
  const admission = withPredicates(deps.admission, deps.cluster?.node, {
    // upstream admits against the other pods as allocated
    pods: allocatedPods,
    // upstream `filterOutInactivePods`: admitted, neither terminal nor terminating
    isActive: (pod) => workers.phaseOf(pod.metadata.uid ?? "") === "syncing",
    ...(deps.pluginResources ? { pluginResources: deps.pluginResources } : {}),
  });
  const handler: PodSyncHandler = new PodSyncHandler({
    workers,
    clock,
    logger,
    allSourcesReady: () => podConfig.allSourcesReady(),
    ...(prober ? { prober } : {}),
    ...(deps.listRunningPods ? { listRunningPods: deps.listRunningPods } : {}),
    ...(deps.statuses ? { statuses: deps.statuses } : {}),
    ...(deps.podCgroups ? { podCgroups: deps.podCgroups } : {}),
    ...(deps.userNamespaces ? { userNamespaces: deps.userNamespaces } : {}),
    ...(admission ? { admission } : {}),
    ...(allocations
      ? {
        resize: {
          allocations,
          environment: () =>
            resizeEnvironment(deps.cluster?.node, {
              pods: allocatedPods,
              isActive: (pod) =>
                workers.phaseOf(pod.metadata.uid ?? "") === "syncing",
            }),
        },
      }
      : {}),
  });
  const pleg = new Pleg({ runtime: deps.runtime, clock, logger }, {
    callTimeoutMs: options.runtimeRequestTimeoutMs ?? 120_000,
    onEvents: (events) => {
      for (const event of events) {
        // before the pod's worker can sync on it
        deps.runtimeCache?.invalidate(event.podUid);
        queue.push({ kind: "pleg", event });
      }
    },
  });
  const sources: PodSource[] = [];
  if (options.staticPodPath) {
    sources.push(createFileSource({ clock, logger }, {
      path: options.staticPodPath,
      nodeName: options.nodeName,
      checkFrequencyMs: options.fileCheckFrequencyMs ?? 20_000,
      onSnapshot: (pods) => podConfig.set("file", pods),
      watch: options.watchManifests ?? true,
    }));
  }
  if (options.staticPodURL) {
    sources.push(createHttpSource({
      clock,
      logger,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    }, {
      url: options.staticPodURL,
      headers: options.staticPodURLHeader ?? {},
      nodeName: options.nodeName,
      checkFrequencyMs: options.httpCheckFrequencyMs ?? 20_000,
      onSnapshot: (pods) => podConfig.set("http", pods),
    }));
  }
  const cluster = deps.cluster;
  if (cluster) {
    sources.push(createApiSource({ api: cluster.pods, clock, logger }, {
      nodeName: options.nodeName,
      onSnapshot: (pods) => podConfig.set("api", pods),
      ...(cluster.onMirrorPods ? { onMirrorPods: cluster.onMirrorPods } : {}),
    }));
  }
  const statusSync = cluster
    ? new PodStatusSync({
      api: cluster.pods,
      statuses: cluster.statuses,
      clock,
      logger: logger.with({ component: "status-manager" }),
      pods: () => podConfig.pods(),
      // Deleted from the API only once the pod worker finished (or never ran it).
      podTerminated: (uid) => {
        const phase = workers.phaseOf(uid);
        return phase === undefined || phase === "finished";
      },
      ...(cluster.mirrorPodOf ? { mirrorPodOf: cluster.mirrorPodOf } : {}),
    }, {
      ...(cluster.statusSyncPeriodMs !== undefined
        ? { syncPeriodMs: cluster.statusSyncPeriodMs }
        : {}),
    })
    : undefined;

  const stopper = new AbortController();
  const tasks: Promise<void>[] = [];
  let stopped: Promise<void> | undefined;

  const settled = () => queue.size === 0 && !handler.housekeeping;
  const whenIdle = async () => {
    // The loop consumes queued events on later turns; wait until nothing is queued, no
    // housekeeping runs and every pod worker is idle, twice in a row.
    for (let quiet = 0; quiet < 2;) {
      await workers.whenIdle();
      await new Promise<void>((r) => setTimeout(r, 0));
      quiet = settled() ? quiet + 1 : 0;
    }
  };

  return {
    podConfig,
    workers,
    handler,
    pleg,
    syncLoop: monitor,
    start() {
      if (tasks.length || stopper.signal.aborted) return;
      const signal = stopper.signal;
      logger.info("Starting standalone kubelet", {
        node: options.nodeName,
        sources: sourceNames,
      });
      for (const s of sources) tasks.push(s.run(signal));
      if (statusSync) tasks.push(statusSync.run(signal));
      tasks.push(pleg.run(signal));
      prober?.start(signal);
      tasks.push(
        runSyncLoop({ queue, handler, clock, logger, monitor }, { signal }),
      );
      if (deps.containerGc) {
        tasks.push(runContainerGc(deps.containerGc, {
          clock,
          logger,
          workers,
          allSourcesReady: () => podConfig.allSourcesReady(),
        }, {
          periodMs: options.containerGcPeriodMs ?? CONTAINER_GC_PERIOD_MS,
          signal,
        }));
      }
      if (deps.imageGc) {
        const { gc, warn } = deps.imageGc;
        tasks.push(runImageGc(gc, {
          clock,
          logger: logger.with({ component: "image-gc" }),
          ...(warn ? { warn } : {}),
        }, {
          ...(options.imageGcPeriodMs !== undefined
            ? { periodMs: options.imageGcPeriodMs }
            : {}),
          signal,
        }));
      }
    },
    async refreshSources() {
      for (const s of sources) await s.refresh();
    },
    async relist() {
      await pleg.relist();
    },
    whenIdle,
    stop() {
      stopped ??= (async () => {
        stopper.abort();
        await Promise.all(tasks);
        await prober?.stop();
        await workers.stop();
        logger.info("Kubelet stopped; containers keep running");
      })();
      return stopped;
    },
    async [Symbol.asyncDispose]() {
      await this.stop();
    },
  };
}

/**
 * What a resize decision needs: node allocatable (unbounded without a Node) and the node
 * predicates against the other active pods as allocated (always admitted without a Node).
 */
function resizeEnvironment(
  node: (() => Node | undefined) | undefined,
  pods: { pods: () => Pod[]; isActive: (pod: Pod) => boolean },
): ResizeEnvironment {
  const allocatable = node?.()?.status?.allocatable;
  const predicates = node ? predicateAdmitter({ node, ...pods }) : undefined;
  return {
    allocatable: {
      cpuMillis: allocatable?.["cpu"] !== undefined
        ? milliValue(allocatable["cpu"])
        : Number.MAX_SAFE_INTEGER,
      memoryBytes: allocatable?.["memory"] !== undefined
        ? quantityValue(allocatable["memory"])
        : Number.MAX_SAFE_INTEGER,
    },
    admit: (pod) => {
      const verdict = predicates?.admit(pod);
      return !verdict || verdict.admit
        ? { admit: true }
        : { admit: false, message: verdict.message };
    },
  };
}

/** Chains predicate admission after `base` when the Node is known (API server mode). */
function withPredicates(
  base: PodAdmission | undefined,
  node: (() => Node | undefined) | undefined,
  pods: {
    pods: () => Pod[];
    isActive: (pod: Pod) => boolean;
    pluginResources?: (pod: Pod) => ReadonlyMap<string, number>;
  },
): PodAdmission | undefined {
  if (!node) return base;
  if (!base) {
    throw new TypeError(
      "predicate admission needs KubeletDeps.admission to record refusals",
    );
  }
  const predicates = predicateAdmitter({ node, ...pods });
  return {
    admit: (pod) => {
      const first = base.admit(pod);
      return first.admit ? predicates.admit(pod) : first;
    },
    reject: (pod, refusal) => base.reject(pod, refusal),
  };
}

/** Upstream `StartGarbageCollection`: one container GC pass per period until `signal` aborts. */
async function runContainerGc(
  gc: ContainerGc,
  deps: {
    clock: Clock;
    logger: Logger;
    workers: PodWorkers;
    allSourcesReady: () => boolean;
  },
  options: { periodMs: number; signal: AbortSignal },
): Promise<void> {
  const { signal } = options;
  while (!signal.aborted) {
    await deps.clock.sleep(options.periodMs, signal).catch(() => {});
    if (signal.aborted) break;
    try {
      await gc.collect(deps.workers, {
        allSourcesReady: deps.allSourcesReady(),
        signal,
      });
    } catch (cause) {
      if (signal.aborted) break;
      deps.logger.error("Container garbage collection failed", {
        err: errorMessage(cause),
      });
    }
  }
}
