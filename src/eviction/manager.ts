/**
 * The eviction manager's loop (upstream `managerImpl.Start`/`synchronize`): every monitoring
 * period it reads the node, lets `decide.ts` find the thresholds to act on, tries node-level
 * reclaim (container and image GC) first, then ranks the active pods and evicts at most one,
 * and waits for that pod to be cleaned up before the next pass. The conditions it holds feed
 * node status and admission.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { Pod } from "../pod/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import { isCriticalPod } from "./admission.ts";
import {
  evaluateThresholds,
  evictionGracePeriodSeconds,
  type EvictionState,
  initialEvictionState,
  type Observations,
  thresholdMetInfo,
  thresholdsMet,
  thresholdToReclaim,
} from "./decide.ts";
import { type NodeStats, observationsFrom } from "./observe.ts";
import {
  evictionMessage,
  type FsStatsKind,
  type PodUsage,
  rankPods,
} from "./rank.ts";
import type {
  PressureCondition,
  ReclaimResource,
  Signal,
  Threshold,
} from "./thresholds.ts";

/** Upstream's eviction monitoring period. */
export const EVICTION_MONITORING_PERIOD_MS = 10_000;
const POD_CLEANUP_TIMEOUT_MS = 30_000;
const POD_CLEANUP_POLL_MS = 1_000;

/** What the manager reads and does; the composition root wires each. */
export interface EvictionManagerDeps {
  clock: Clock;
  logger: Logger;
  /** The node's figures now and whether the image filesystem is a device of its own. */
  readNode(): Promise<{ stats: NodeStats; dedicatedImageFs: boolean }>;
  /** Usage of these pods by UID; a pod missing from the map had no stats. */
  readPods(pods: readonly Pod[]): Promise<ReadonlyMap<string, PodUsage>>;
  /** The pods admitted and not yet terminating. */
  activePods(): readonly Pod[];
  /**
   * Kills the pod with this grace period and publishes the Evicted status with `message`;
   * resolves once it was handed to the pod worker.
   */
  evictPod(
    pod: Pod,
    eviction: { gracePeriodSeconds: number; message: string },
  ): void;
  /** True once the pod's containers are gone and its resources released. */
  podCleanedUp(pod: Pod): boolean;
  /** Upstream `DeleteAllUnusedContainers`. */
  deleteUnusedContainers?(): Promise<void>;
  /** Upstream `DeleteUnusedImages`. */
  deleteUnusedImages?(): Promise<void>;
  /** A Warning event on the node. */
  nodeEvent?(reason: string, message: string): void;
}

/** Settings of the manager (from the KubeletConfiguration). */
export interface EvictionManagerOptions {
  thresholds: readonly Threshold[];
  /** `evictionPressureTransitionPeriod` (default 5 min). */
  transitionPeriodMs: number;
  /** `evictionMaxPodGracePeriod` (seconds). */
  maxPodGracePeriodSeconds: number;
  monitoringPeriodMs?: number;
}

/** The running manager. */
export interface EvictionManager {
  /** The pressure conditions held now (node status and admission read them). */
  conditions(): readonly PressureCondition[];
  /** One pass; the pods evicted (at most one). Exposed for tests. */
  synchronize(): Promise<Pod[]>;
  /** Runs passes until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
}

/** Which filesystems a disk signal's ranking counts (upstream `buildSignalToRankFunc`). */
export function diskRankKinds(
  signal: Signal,
  dedicatedImageFs: boolean,
): FsStatsKind[] {
  if (!dedicatedImageFs) return ["root", "logs", "localVolumes"];
  return signal.startsWith("nodefs.") ? ["logs", "localVolumes"] : ["root"];
}

/** Which node-level reclaim a signal gets (upstream `buildSignalToNodeReclaimFuncs`). */
export function nodeReclaimFor(
  signal: Signal,
  dedicatedImageFs: boolean,
): ("containers" | "images")[] {
  if (
    signal === "memory.available" || signal === "allocatableMemory.available"
  ) {
    return [];
  }
  if (signal === "pid.available") return [];
  if (dedicatedImageFs && signal.startsWith("nodefs.")) return [];
  return ["containers", "images"];
}

class Manager implements EvictionManager {
  #deps: EvictionManagerDeps;
  #options: EvictionManagerOptions;
  #state: EvictionState = initialEvictionState();

  constructor(deps: EvictionManagerDeps, options: EvictionManagerOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  conditions(): readonly PressureCondition[] {
    return this.#state.conditions;
  }

  async #reclaimNodeLevel(
    signal: Signal,
    dedicatedImageFs: boolean,
  ): Promise<boolean> {
    const steps = nodeReclaimFor(signal, dedicatedImageFs);
    if (steps.length === 0) return false;
    for (const step of steps) {
      const run = step === "containers"
        ? this.#deps.deleteUnusedContainers
        : this.#deps.deleteUnusedImages;
      try {
        await run?.call(this.#deps);
      } catch (error) {
        this.#deps.logger.info(
          "Eviction manager: unexpected error when attempting to reduce resource pressure",
          { err: errorMessage(error) },
        );
      }
    }
    let observations: Observations;
    try {
      observations = observationsFrom((await this.#deps.readNode()).stats);
    } catch (error) {
      this.#deps.logger.error(
        "Eviction manager: failed to get summary stats after resource reclaim",
        { err: errorMessage(error) },
      );
      return false;
    }
    return thresholdsMet(this.#options.thresholds, observations, true)
      .length === 0;
  }

  async synchronize(): Promise<Pod[]> {
    const { logger } = this.#deps;
    if (this.#options.thresholds.length === 0) return [];
    const active = [...this.#deps.activePods()];
    const { stats, dedicatedImageFs } = await this.#deps.readNode();
    const observations = observationsFrom(stats);
    const { state, actionable } = evaluateThresholds(this.#state, {
      thresholds: this.#options.thresholds,
      observations,
      nowMs: this.#deps.clock.now(),
      transitionPeriodMs: this.#options.transitionPeriodMs,
    });
    this.#state = state;
    const chosen = thresholdToReclaim(actionable);
    if (!chosen) return [];
    const { threshold, resource } = chosen;
    logger.info("Eviction manager: attempting to reclaim", {
      resourceName: resource,
    });
    this.#deps.nodeEvent?.(
      "EvictionThresholdMet",
      `Attempting to reclaim ${resource}`,
    );
    if (await this.#reclaimNodeLevel(threshold.signal, dedicatedImageFs)) {
      logger.info(
        "Eviction manager: able to reduce resource pressure without evicting pods.",
        { resourceName: resource },
      );
      return [];
    }
    if (active.length === 0) {
      logger.error(
        "Eviction manager: eviction thresholds have been met, but no pods are active to evict",
      );
      return [];
    }
    const usage = await this.#deps.readPods(active);
    const usageOf = (p: Pod) => usage.get(p.metadata.uid ?? "");
    const ranked = rankPods(active, usageOf, {
      resource,
      kinds: diskRankKinds(threshold.signal, dedicatedImageFs),
    });
    logger.info("Eviction manager: pods ranked for eviction", {
      pods: ranked.map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
    });
    for (const pod of ranked) {
      if (isCriticalPod(pod)) {
        logger.error("Eviction manager: cannot evict a critical pod", {
          pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
        });
        continue;
      }
      const message = evictionMessage(pod, {
        resource,
        usage: usageOf(pod),
        met: thresholdMetInfo(resource, actionable, observations),
      });
      this.#deps.evictPod(pod, {
        gracePeriodSeconds: evictionGracePeriodSeconds(threshold, {
          maxPodGracePeriodSeconds: this.#options.maxPodGracePeriodSeconds,
          podGracePeriodSeconds: pod.spec.terminationGracePeriodSeconds,
        }),
        message,
      });
      logger.info("Eviction manager: pod is evicted successfully", {
        pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
      });
      return [pod];
    }
    logger.info("Eviction manager: unable to evict any pods from the node");
    return [];
  }

  async #waitForCleanup(pods: Pod[], signal: AbortSignal): Promise<void> {
    const { clock } = this.#deps;
    const deadline = clock.now() + POD_CLEANUP_TIMEOUT_MS;
    while (!signal.aborted && clock.now() < deadline) {
      await clock.sleep(POD_CLEANUP_POLL_MS, signal).catch(() => {});
      if (pods.every((p) => this.#deps.podCleanedUp(p))) return;
    }
  }

  async run(signal: AbortSignal): Promise<void> {
    const period = this.#options.monitoringPeriodMs ??
      EVICTION_MONITORING_PERIOD_MS;
    this.#deps.logger.info("Eviction manager: starting control loop");
    while (!signal.aborted) {
      let evicted: Pod[] = [];
      try {
        evicted = await this.synchronize();
      } catch (error) {
        this.#deps.logger.error("Eviction manager: failed to synchronize", {
          err: errorMessage(error),
        });
      }
      if (evicted.length > 0) await this.#waitForCleanup(evicted, signal);
      else await this.#deps.clock.sleep(period, signal).catch(() => {});
    }
  }
}

/** Creates the eviction manager. */
export function createEvictionManager(
  deps: EvictionManagerDeps,
  options: EvictionManagerOptions,
): EvictionManager {
  return new Manager(deps, options);
}

/** The resources eviction reclaims, re-exported for callers naming them. */
export type { ReclaimResource };
