/**
 * Wiring of graceful node shutdown (src/node_shutdown) into the kubelet: the configuration's
 * groups, logind on the system bus, the pods the workers run, and a kill that marks the pod's
 * status before the workers stop it (upstream `killPodNow` with the shutdown status function).
 *
 * @module
 */

import type { Pod } from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import {
  createNodeShutdownManager,
  NODE_SHUTDOWN_POD_MESSAGE,
  NODE_SHUTDOWN_POD_REASON,
  type NodeShutdownManager,
  shutdownGroups,
  storeShutdownState,
} from "../node_shutdown/mod.ts";
import type { PodWorkers, RuntimePodSyncer } from "../pod/mod.ts";
import {
  canReceiveUnixFds,
  connectLogind,
  writeInhibitDelayDropIn,
} from "../systemd/mod.ts";
import {
  agentLogind,
  agentWriteInhibitDelay,
  cgroupAgentSocket,
} from "../cgroup_agent/mod.ts";
import { parseGoDuration } from "../util/go_duration.ts";

/** The configuration graceful shutdown reads. */
export interface NodeShutdownConfig {
  shutdownGracePeriod?: string | undefined;
  shutdownGracePeriodCriticalPods?: string | undefined;
  shutdownGracePeriodByPodPriority?:
    | { priority: number; shutdownGracePeriodSeconds: number }[]
    | undefined;
}

/** What the wiring needs from the rest of the kubelet. */
export interface NodeShutdownWiring {
  clock: Clock;
  logger: Logger;
  syncer: Pick<RuntimePodSyncer, "markKubeletTermination">;
  workers: Pick<PodWorkers, "updatePod" | "phaseOf">;
  /** The pods the kubelet was given (admitted or not). */
  pods(): Pod[];
  syncNodeStatus?(): void;
  recordEvent?(message: string): void;
  gates: { enabled(name: string): boolean };
  rootDir: string;
}

function ms(value: string | undefined): number {
  return value ? parseGoDuration(value) : 0;
}

/** How often a kill's completion is checked. */
const KILL_POLL_MS = 250;

/**
 * Upstream `killPodNow`: the status is marked, the workers kill the pod with `grace`, and the
 * promise resolves once the worker has stopped its containers; it rejects after 1.5 × the
 * grace period (at least 10 s), as upstream gives up waiting.
 */
async function killForShutdown(
  wiring: NodeShutdownWiring,
  pod: Pod,
  grace: number,
): Promise<void> {
  const uid = pod.metadata.uid ?? "";
  wiring.syncer.markKubeletTermination(uid, {
    reason: NODE_SHUTDOWN_POD_REASON,
    message: NODE_SHUTDOWN_POD_MESSAGE,
    keepSucceeded: true,
  });
  wiring.workers.updatePod({
    pod,
    updateType: "kill",
    gracePeriodSeconds: grace,
  });
  const deadline = wiring.clock.now() +
    Math.max(10_000, Math.trunc(grace * 1.5) * 1000);
  for (;;) {
    const phase = wiring.workers.phaseOf(uid);
    if (phase !== "syncing" && phase !== "terminating") return;
    if (wiring.clock.now() >= deadline) {
      throw new Error(`timeout waiting to kill pod "${uid}"`);
    }
    await wiring.clock.sleep(KILL_POLL_MS);
  }
}

/**
 * The manager when the configuration asks for graceful shutdown and the gate is on; undefined
 * otherwise (upstream's stub). Not started.
 */
export function nodeShutdownManager(
  config: NodeShutdownConfig,
  wiring: NodeShutdownWiring,
): NodeShutdownManager | undefined {
  if (!wiring.gates.enabled("GracefulNodeShutdown")) return undefined;
  const byPriorityGate = wiring.gates.enabled(
    "GracefulNodeShutdownBasedOnPodPriority",
  );
  const groups = shutdownGroups({
    shutdownGracePeriodMs: ms(config.shutdownGracePeriod),
    shutdownGracePeriodCriticalPodsMs: ms(
      config.shutdownGracePeriodCriticalPods,
    ),
    byPodPriority: config.shutdownGracePeriodByPodPriority ?? [],
    byPriorityGate,
  });
  if (groups.length === 0) return undefined;
  const logger = wiring.logger.with({ component: "nodeshutdown" });
  logger.info("Creating node shutdown manager", {
    shutdownGracePeriodRequested: config.shutdownGracePeriod ?? "0s",
    shutdownGracePeriodCriticalPods: config.shutdownGracePeriodCriticalPods ??
      "0s",
    shutdownGracePeriodByPodPriority: groups.map((g) =>
      `${g.priority}:${g.gracePeriodSeconds}s`
    ).join(","),
  });
  // with every permission the kubelet speaks to logind itself; under its lists the cgroup
  // agent does (the bus socket is not granted and the lock's descriptor needs FFI)
  const direct = canReceiveUnixFds();
  const agentSocket = cgroupAgentSocket(wiring.rootDir);
  const viaAgent = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      await Deno.stat(agentSocket);
    } catch {
      throw new Error(
        `graceful node shutdown needs logind, which the kubelet under its permission lists reaches only through the cgroup agent, and no agent socket is at ${agentSocket}: start the agent (docs/permissions.md) or run the kubelet with every permission`,
      );
    }
    return await call();
  };
  return createNodeShutdownManager({
    connect: () =>
      direct ? connectLogind() : viaAgent(() => agentLogind(agentSocket)),
    writeInhibitDelay: (seconds) =>
      direct
        ? writeInhibitDelayDropIn(seconds)
        : viaAgent(() => agentWriteInhibitDelay(agentSocket, seconds)),
    activePods: () =>
      wiring.pods().filter((pod) => {
        const phase = wiring.workers.phaseOf(pod.metadata.uid ?? "");
        return phase === "syncing" || phase === "terminating";
      }),
    killPod: (pod, grace) => killForShutdown(wiring, pod, grace),
    ...(wiring.syncNodeStatus ? { syncNodeStatus: wiring.syncNodeStatus } : {}),
    ...(wiring.recordEvent ? { recordEvent: wiring.recordEvent } : {}),
    storeState: (state) => storeShutdownState(wiring.rootDir, state),
    clock: wiring.clock,
    logger,
  }, { groups, storeState: byPriorityGate });
}
