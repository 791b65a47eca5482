/**
 * The graceful node shutdown executor (upstream `nodeshutdown` manager on Linux): makes sure
 * logind lets the kubelet delay a shutdown long enough (raising `InhibitDelayMaxSec` through a
 * drop-in when it is too small), holds a "delay" inhibitor lock, and on `PrepareForShutdown`
 * (true) refuses new pods, reports the node not ready, stops the pods group by group (lowest
 * priority first, each group within its grace period) and releases the lock so the shutdown
 * goes on. `PrepareForShutdown` (false) cancels: pods are admitted again and the lock is taken
 * anew. A lost bus connection is re-established after a second. The decisions are in
 * `shutdown_plan.ts`; this file only sequences them.
 *
 * @module
 */

import type { Pod } from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import {
  GO_ZERO_TIME,
  groupPods,
  NODE_SHUTDOWN_ADMIT_MESSAGE,
  NODE_SHUTDOWN_ADMIT_REASON,
  NODE_SHUTTING_DOWN_ERROR,
  podShutdownGrace,
  requestedPeriodSeconds,
  type ShutdownGroup,
  type ShutdownState,
} from "./shutdown_plan.ts";

/** The inhibitor lock logind hands out; releasing it lets the shutdown proceed. */
export interface ShutdownLock {
  readonly fd: number;
  release(): void;
}

/** What the manager asks of logind (one bus connection). */
export interface ShutdownLogind {
  inhibitDelayMaxMs(): Promise<number>;
  reloadLogind(): Promise<void>;
  inhibitShutdown(): Promise<ShutdownLock>;
  watchShutdown(listener: (shuttingDown: boolean) => void): Promise<void>;
  /** Resolves when the connection is gone. */
  readonly closed: Promise<void>;
  close(): void;
}

/** Dependencies of {@linkcode createNodeShutdownManager}. */
export interface NodeShutdownDeps {
  /** A new logind connection. */
  connect(): Promise<ShutdownLogind>;
  /** Writes the logind drop-in setting `InhibitDelayMaxSec` to `seconds`. */
  writeInhibitDelay(seconds: number): Promise<void>;
  /** The pods the kubelet runs now (upstream `GetActivePods`). */
  activePods(): Pod[];
  /**
   * Stops `pod` with `gracePeriodSeconds`, its status saying why (phase Failed, reason
   * `Terminated`, the shutdown message, a `DisruptionTarget` condition); resolves once its
   * containers are stopped.
   */
  killPod(pod: Pod, gracePeriodSeconds: number): Promise<void>;
  /** Reports the node's status now (its Ready condition reads {@linkcode NodeShutdownManager.shutdownError}). */
  syncNodeStatus?(): void;
  /** A Normal `NodeShutdown` event on the Node. */
  recordEvent?(message: string): void;
  /** Persists the state file (only with the by-priority gate on, as upstream). */
  storeState?(state: ShutdownState): Promise<void>;
  clock: Clock;
  logger: Logger;
}

/** Options of {@linkcode createNodeShutdownManager}. */
export interface NodeShutdownOptions {
  /** From `shutdownGroups`; must not be empty. */
  groups: readonly ShutdownGroup[];
  /** Wait before reconnecting to the bus (default 1 s, upstream `dbusReconnectPeriod`). */
  reconnectDelayMs?: number;
  /**
   * Write the state file at the start and end of a shutdown (upstream does so when the
   * `GracefulNodeShutdownBasedOnPodPriority` gate is on).
   */
  storeState?: boolean;
}

/** A running graceful shutdown manager. */
export interface NodeShutdownManager extends AsyncDisposable {
  /**
   * Connects, checks the inhibit delay, takes the lock and watches for shutdowns; rejects when
   * that first attempt fails (the kubelet logs it and runs on, as upstream). Later losses of
   * the connection are retried every `reconnectDelayMs` until `stop()`.
   */
  start(): Promise<void>;
  /** "node is shutting down" while a shutdown is under way (the Ready condition's error). */
  shutdownError(): string | undefined;
  /** Upstream `Admit`: refuses every pod while the node shuts down. */
  admit(pod: Pod): { admit: true } | {
    admit: false;
    reason: string;
    message: string;
  };
  /** Resolves when the shutdown being handled (if any) has stopped every group. */
  whenIdle(): Promise<void>;
  /** Stops watching and releases the lock. Safe to call twice. */
  stop(): Promise<void>;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/** Builds the manager; nothing happens before `start()`. */
export function createNodeShutdownManager(
  deps: NodeShutdownDeps,
  options: NodeShutdownOptions,
): NodeShutdownManager {
  const { clock, logger } = deps;
  const groups = [...options.groups];
  const requestedMs = requestedPeriodSeconds(groups) * 1000;
  const stopper = new AbortController();
  let bus: ShutdownLogind | undefined;
  let lock: ShutdownLock | undefined;
  let shuttingDown = false;
  let handling: Promise<void> = Promise.resolve();
  let watching: Promise<void> | undefined;

  const takeLock = async (logind: ShutdownLogind) => {
    const next = await logind.inhibitShutdown();
    lock?.release();
    lock = next;
  };
  const releaseLock = () => {
    lock?.release();
    lock = undefined;
  };

  /** Upstream `podManager.killPods`: one group after the other. */
  const killGroups = async (pods: Pod[]) => {
    for (const group of groupPods(groups, pods)) {
      if (group.pods.length === 0) continue;
      const kills = Promise.all(group.pods.map(async (pod) => {
        const grace = podShutdownGrace(pod, group);
        const name = `${pod.metadata.namespace}/${pod.metadata.name}`;
        logger.info("Shutdown manager killing pod with gracePeriod", {
          pod: name,
          gracePeriod: grace,
        });
        try {
          await deps.killPod(pod, grace);
          logger.info("Shutdown manager finished killing pod", { pod: name });
        } catch (error) {
          logger.info("Shutdown manager failed killing pod", {
            pod: name,
            err: errorMessage(error),
          });
        }
      }));
      const timeout = new AbortController();
      const timer = clock.sleep(group.gracePeriodSeconds * 1000, timeout.signal)
        .then(() => "timeout" as const, () => "done" as const);
      const outcome = await Promise.race([
        kills.then(() => "done" as const),
        timer,
      ]);
      timeout.abort();
      logger.info(
        outcome === "done"
          ? "Done waiting for all pods in group to terminate"
          : "Shutdown manager pod killing time out",
        { gracePeriod: group.gracePeriodSeconds, priority: group.priority },
      );
    }
  };

  /** Upstream `processShutdownEvent`. */
  const processShutdown = async () => {
    logger.info("Shutdown manager processing shutdown event");
    const start = clock.now();
    const store = options.storeState ? deps.storeState : undefined;
    const save = async (state: ShutdownState) => {
      try {
        await store?.(state);
      } catch (error) {
        logger.error("Failed to store graceful shutdown state", {
          err: errorMessage(error),
        });
      }
    };
    if (store) {
      await save({ startTime: rfc3339(start), endTime: GO_ZERO_TIME });
    }
    try {
      await killGroups(deps.activePods());
    } finally {
      if (store) {
        await save({
          startTime: rfc3339(start),
          endTime: rfc3339(clock.now()),
        });
      }
      releaseLock();
      logger.info(
        "Shutdown manager completed processing shutdown event, node will shutdown shortly",
      );
    }
  };

  const onEvent = (logind: ShutdownLogind, isShuttingDown: boolean) => {
    logger.info("Shutdown manager detected new shutdown event", {
      event: isShuttingDown ? "shutdown" : "cancelled",
    });
    deps.recordEvent?.(
      isShuttingDown
        ? "Shutdown manager detected shutdown event"
        : "Shutdown manager detected shutdown cancellation",
    );
    // events are handled one at a time, as upstream's single goroutine reads its channel
    handling = handling.then(async () => {
      shuttingDown = isShuttingDown;
      if (isShuttingDown) {
        deps.syncNodeStatus?.();
        await processShutdown();
      } else {
        await takeLock(logind).catch((error) =>
          logger.error("Failed to take the inhibitor lock again", {
            err: errorMessage(error),
          })
        );
      }
    });
  };

  /** Upstream `start()`: one connection's worth of watching. */
  const connectOnce = async (): Promise<ShutdownLogind> => {
    const logind = await deps.connect();
    try {
      const current = await logind.inhibitDelayMaxMs();
      if (requestedMs > current) {
        await deps.writeInhibitDelay(requestedMs / 1000);
        await logind.reloadLogind();
        // logind re-reads its files after the signal; upstream reads the value straight back
        const updated = await logind.inhibitDelayMaxMs();
        if (requestedMs > updated) {
          throw new Error(
            `node shutdown manager was unable to update logind InhibitDelayMaxSec to ${
              requestedMs / 1000
            }s (ShutdownGracePeriod), current value of InhibitDelayMaxSec (${
              updated / 1000
            }s) is less than requested ShutdownGracePeriod`,
          );
        }
      }
      await takeLock(logind);
      await logind.watchShutdown((value) => onEvent(logind, value));
      return logind;
    } catch (error) {
      logind.close();
      throw error;
    }
  };

  const watchLoop = async (first: ShutdownLogind) => {
    let current: ShutdownLogind | undefined = first;
    const signal = stopper.signal;
    while (!signal.aborted) {
      if (current) {
        bus = current;
        await Promise.race([
          current.closed,
          new Promise<void>((r) =>
            signal.addEventListener("abort", () => r(), { once: true })
          ),
        ]);
        current.close();
        current = undefined;
        if (signal.aborted) break;
        logger.error("Ended watching the node for shutdown events");
      }
      await clock.sleep(options.reconnectDelayMs ?? 1000, signal).catch(
        () => {},
      );
      if (signal.aborted) break;
      logger.info("Restarting watch for node shutdown events");
      current = await connectOnce().catch((error) => {
        logger.error("Unable to watch the node for shutdown events", {
          err: errorMessage(error),
        });
        return undefined;
      });
    }
  };

  return {
    async start() {
      if (watching) return;
      const first = await connectOnce();
      watching = watchLoop(first);
    },
    shutdownError() {
      return shuttingDown ? NODE_SHUTTING_DOWN_ERROR : undefined;
    },
    admit() {
      return shuttingDown
        ? {
          admit: false,
          reason: NODE_SHUTDOWN_ADMIT_REASON,
          message: NODE_SHUTDOWN_ADMIT_MESSAGE,
        }
        : { admit: true };
    },
    async whenIdle() {
      let seen: Promise<void>;
      do {
        seen = handling;
        await seen;
      } while (seen !== handling);
    },
    async stop() {
      stopper.abort();
      await watching;
      bus?.close();
      releaseLock();
    },
    async [Symbol.asyncDispose]() {
      await this.stop();
    },
  };
}
