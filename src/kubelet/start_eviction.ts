/**
 * Wires the eviction manager (src/eviction) to the kubelet's parts: node figures through the
 * host files (every permission or the cgroup agent) and CRI, the pod workers and syncer for
 * the kill with the Evicted status, container and image GC for node-level reclaim, and node
 * and pod events.
 *
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import {
  createEvictionManager,
  type EvictionManager,
  parseThresholdConfig,
  readNodeStats,
  readPodUsage,
} from "../eviction/mod.ts";
import type { EventRecorder } from "../events/mod.ts";
import type { Logger } from "../log/mod.ts";
import {
  type ContainerGc,
  type HostFiles,
  type ImageGc,
  podReference,
  type RuntimePodSyncer,
} from "../pod/mod.ts";
import type { CriRuntime } from "../runtime/mod.ts";
import { parseGoDuration } from "../util/go_duration.ts";
import { errorMessage } from "../util/error_message.ts";
import type { Kubelet } from "./create_kubelet.ts";
import { readNodeUsage } from "./node_usage.ts";

/** Filled once the manager exists (node status and admission are built before it). */
export interface LateEviction {
  manager?: EvictionManager;
}

/** Upstream `GetPodCgroupRoot` for the cgroupfs driver (systemd: `kubepods.slice`). */
export function podCgroupRoot(config: {
  cgroupRoot?: string | undefined;
  cgroupsPerQOS?: boolean | undefined;
  cgroupDriver?: string | undefined;
}): string {
  const root = (config.cgroupRoot ?? "/").replace(/\/+$/, "");
  if (config.cgroupsPerQOS === false) return root || "/";
  const name = config.cgroupDriver === "systemd"
    ? "kubepods.slice"
    : "kubepods";
  return `${root}/${name}`;
}

/** The KubeletConfiguration fields of node-pressure eviction. */
export interface EvictionConfig {
  evictionHard?: Record<string, string> | undefined;
  evictionSoft?: Record<string, string> | undefined;
  evictionSoftGracePeriod?: Record<string, string> | undefined;
  evictionMinimumReclaim?: Record<string, string> | undefined;
  evictionPressureTransitionPeriod?: string | undefined;
  evictionMaxPodGracePeriod?: number | undefined;
}

/** Starts the manager's loop; resolves when `signal` aborts. */
export function startEviction(
  deps: {
    runtime: CriRuntime;
    clock: Clock;
    logger: Logger;
    kubelet: Pick<Kubelet, "podConfig" | "workers">;
    syncer: Pick<RuntimePodSyncer, "recordEviction">;
    containerGc: ContainerGc;
    imageGc?: ImageGc;
    host?: HostFiles;
    events?: EventRecorder;
    warnNode?: (reason: string, message: string) => void;
  },
  options: {
    config: EvictionConfig & {
      enforceNodeAllocatable?: string[] | undefined;
      cgroupRoot?: string | undefined;
      cgroupsPerQOS?: boolean | undefined;
      cgroupDriver?: string | undefined;
      podLogsDir?: string | undefined;
    };
    rootDir: string;
    late: LateEviction;
    signal: AbortSignal;
  },
): Promise<void> {
  const { config } = options;
  const logger = deps.logger.with({ component: "eviction" });
  const thresholds = parseThresholdConfig(config);
  if (!deps.host && thresholds.length > 0) {
    logger.warn(
      "Without every permission and without the cgroup agent the kubelet cannot read the node's memory, filesystem and PID figures: no eviction signal is observed and no pod is evicted for node pressure; run the cgroup agent (docs/permissions.md)",
    );
  }
  const { kubelet } = deps;
  const paths = {
    rootDir: options.rootDir,
    podLogsDir: config.podLogsDir ?? "/var/log/pods",
    kubepods: podCgroupRoot(config),
  };
  // upstream `PodIsFinished`: the terminated pod's volumes are torn down and its cgroup gone,
  // so the next pass sees what its eviction freed (else a second pod goes for the same need)
  const cleanedUp = (uid: string) => {
    const phase = kubelet.workers.phaseOf(uid);
    return phase === undefined || phase === "finished";
  };
  const manager = createEvictionManager({
    clock: deps.clock,
    logger,
    readNode: () =>
      readNodeStats({
        host: deps.host,
        runtime: deps.runtime,
        memoryCapacity: () => Deno.systemMemoryInfo().total,
        rootWorkingSet: async () =>
          deps.host
            ? (await readNodeUsage({
              fs: deps.host,
              memory: () => Deno.systemMemoryInfo(),
              now: () => deps.clock.now(),
            })).memoryWorkingSetBytes
            : undefined,
        now: () => deps.clock.now(),
      }, paths),
    readPods: (pods) => readPodUsage({ runtime: deps.runtime }, pods, paths),
    activePods: () =>
      kubelet.podConfig.pods().filter((p) =>
        kubelet.workers.phaseOf(p.metadata.uid ?? "") === "syncing"
      ),
    evictPod: (pod, eviction) => {
      deps.events?.event(
        podReference(pod),
        "Warning",
        "Evicted",
        eviction.message,
      );
      deps.syncer.recordEviction(pod.metadata.uid ?? "", eviction);
      kubelet.workers.evictPod(pod, eviction.gracePeriodSeconds);
    },
    podCleanedUp: (pod) => cleanedUp(pod.metadata.uid ?? ""),
    deleteUnusedContainers: async () => {
      const result = await deps.containerGc.collect(kubelet.workers, {
        allSourcesReady: kubelet.podConfig.allSourcesReady(),
        evictNonDeletedPods: true,
        signal: options.signal,
      });
      if (result.errors.length > 0) throw new Error(result.errors.join("; "));
    },
    ...(deps.imageGc
      ? {
        deleteUnusedImages: () =>
          deps.imageGc!.deleteUnusedImages({ signal: options.signal }),
      }
      : {}),
    ...(deps.warnNode ? { nodeEvent: deps.warnNode } : {}),
  }, {
    thresholds,
    transitionPeriodMs: parseGoDuration(
      config.evictionPressureTransitionPeriod || "5m",
    ),
    maxPodGracePeriodSeconds: config.evictionMaxPodGracePeriod ?? 0,
  });
  options.late.manager = manager;
  return manager.run(options.signal).catch((error) =>
    logger.error("Eviction manager stopped", { err: errorMessage(error) })
  );
}
