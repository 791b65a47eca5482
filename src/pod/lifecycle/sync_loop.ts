/**
 * The kubelet sync loop: one consumer of a typed {@linkcode LoopEvent} queue fed by the pod
 * config (updates), the PLEG (lifecycle events), the prober (result changes), a 1 s resync ticker and a 2 s housekeeping
 * ticker. {@linkcode dispatch} maps one event to one {@linkcode SyncHandler} call and is tested
 * per event; {@linkcode PodSyncHandler} is the kubelet's handler (pod manager + pod workers +
 * orphan clean-up once every source has reported).
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { PodUpdate } from "../sources/pod_config.ts";
import type { PodLifecycleEvent } from "./pleg.ts";
import type { PodWorkers } from "./pod_workers.ts";
import { needsReadinessReconcile } from "../status/readiness_gates.ts";
import { type RunningPod, runningPodStandIn } from "./runtime_pods.ts";
import { podFullName } from "../types.ts";
import type { Pod } from "../types.ts";
import { CONFIG_SEEN_ANNOTATION } from "../static/static_pod.ts";
import type { SyncLoopRecorder } from "./sync_loop_monitor.ts";
import { errorMessage } from "../../util/error_message.ts";
import type {
  AllocationManager,
  ResizeEnvironment,
} from "../resize/allocation_manager.ts";
import { INITIAL_RETRY_MS, RETRY_MS } from "../resize/allocation_manager.ts";

/** Everything the sync loop reacts to. */
export type LoopEvent =
  | { kind: "config"; update: PodUpdate }
  | { kind: "pleg"; event: PodLifecycleEvent }
  /** A liveness, readiness or startup result of one of the pod's containers changed. */
  | { kind: "probe"; podUid: string }
  | { kind: "resync" }
  | { kind: "housekeeping" };

/** What the sync loop calls; one method per kind of work (kubelet's `SyncHandler`). */
export interface SyncHandler {
  handlePodAdditions(pods: Pod[]): void;
  handlePodUpdates(pods: Pod[]): void;
  handlePodRemoves(pods: Pod[]): void;
  /** A full snapshot replaces the known pods (adds, updates and removes as needed). */
  handlePodSet(pods: Pod[]): void;
  /** Pods whose API status alone changed (upstream `HandlePodReconcile`). */
  handlePodReconcile(pods: Pod[]): void;
  handlePlegEvent(event: PodLifecycleEvent): void;
  /** A probe result of the pod changed: sync it now (kubelet's `handleProbeSync`). */
  handleProbeResult(podUid: string): void;
  /** Re-syncs the pods whose worker asked to be requeued by now. */
  handleResync(): void;
  /** Periodic cleanup; only acts once every source has reported. */
  handleHousekeeping(): Promise<void>;
}

/** Routes one loop event to the handler. */
export async function dispatch(
  event: LoopEvent,
  handler: SyncHandler,
): Promise<void> {
  switch (event.kind) {
    case "config": {
      const { op, pods } = event.update;
      if (op === "ADD") handler.handlePodAdditions(pods);
      else if (op === "UPDATE") handler.handlePodUpdates(pods);
      else if (op === "REMOVE") handler.handlePodRemoves(pods);
      else if (op === "RECONCILE") handler.handlePodReconcile(pods);
      else handler.handlePodSet(pods);
      return;
    }
    case "pleg":
      handler.handlePlegEvent(event.event);
      return;
    case "probe":
      handler.handleProbeResult(event.podUid);
      return;
    case "resync":
      handler.handleResync();
      return;
    case "housekeeping":
      await handler.handleHousekeeping();
      return;
  }
}

/** A FIFO of loop events with an async `next`; tick kinds are queued at most once. */
export class LoopEventQueue {
  #items: LoopEvent[] = [];
  #waiter: (() => void) | undefined;

  /** Appends an event; resync/housekeeping ticks already waiting are not queued twice. */
  push(event: LoopEvent): void {
    if (
      (event.kind === "resync" || event.kind === "housekeeping") &&
      this.#items.some((e) => e.kind === event.kind)
    ) return;
    this.#items.push(event);
    this.#waiter?.();
  }

  /** Number of queued events. */
  get size(): number {
    return this.#items.length;
  }

  /** The next event, or undefined once `signal` aborts. */
  async next(signal: AbortSignal): Promise<LoopEvent | undefined> {
    while (!signal.aborted) {
      const item = this.#items.shift();
      if (item) return item;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.#waiter = undefined;
          signal.removeEventListener("abort", done);
          resolve();
        };
        this.#waiter = done;
        signal.addEventListener("abort", done, { once: true });
      });
    }
    return undefined;
  }
}

/** Dependencies of {@linkcode runSyncLoop}. */
export interface SyncLoopDeps {
  queue: LoopEventQueue;
  handler: SyncHandler;
  clock: Clock;
  logger: Logger;
  /** Told the clock's time before and after each iteration (the `syncloop` health check). */
  monitor?: SyncLoopRecorder;
}

/** Options of {@linkcode runSyncLoop}. */
export interface SyncLoopOptions {
  signal: AbortSignal;
  /** Resync ticker period (default 1 s). */
  resyncPeriodMs?: number;
  /** Housekeeping ticker period (default 2 s, `podHousekeepingPeriod`). */
  housekeepingPeriodMs?: number;
}

/** Runs the loop until `options.signal` aborts; the tickers stop with it. Never rejects. */
export async function runSyncLoop(
  deps: SyncLoopDeps,
  options: SyncLoopOptions,
): Promise<void> {
  const { queue, handler, clock, logger, monitor } = deps;
  const { signal } = options;
  const ticker = async (period: number, kind: "resync" | "housekeeping") => {
    while (!signal.aborted) {
      await clock.sleep(period, signal).catch(() => {});
      if (!signal.aborted) queue.push({ kind });
    }
  };
  const tickers = [
    ticker(options.resyncPeriodMs ?? 1000, "resync"),
    ticker(options.housekeepingPeriodMs ?? 2000, "housekeeping"),
  ];
  logger.info("Starting kubelet main sync loop");
  for (;;) {
    // The resync ticker queues an event every second, so an idle loop still iterates;
    // a handler that hangs leaves the time behind.
    monitor?.record(clock.now());
    const event = await queue.next(signal);
    if (!event) break;
    monitor?.record(clock.now());
    try {
      await dispatch(event, handler);
    } catch (cause) {
      logger.error("Sync loop handler failed", {
        event: event.kind,
        err: errorMessage(cause),
      });
    }
  }
  await Promise.all(tickers);
}

/** Dependencies of {@linkcode PodSyncHandler}. */
export interface PodSyncHandlerDeps {
  workers: PodWorkers;
  clock: Clock;
  logger: Logger;
  /** True once every pod source has reported (pod config). */
  allSourcesReady: () => boolean;
  /**
   * The runtime's running pods (a running container or a ready sandbox). Housekeeping hands
   * each one no pod worker knows to a worker that stops it; omitted → orphans are left alone.
   */
  listRunningPods?: () => Promise<RunningPod[]>;
  /** Statuses of pods that left the configuration and finished are dropped by housekeeping. */
  statuses?: {
    allStatuses(): readonly { uid: string }[];
    removePod(uid: string): void;
  };
  /**
   * The kubelet's cgroups: housekeeping keeps the QoS tiers in step with the active pods and
   * removes pod cgroups of pods neither desired nor handled by a worker; omitted → untouched.
   */
  podCgroups?: {
    housekeeping(
      activePods: readonly Pod[],
      known: (uid: string) => boolean,
    ): Promise<void>;
  };
  /**
   * The pods' user namespace ranges: housekeeping frees those of pods neither desired nor
   * handled by a worker (upstream `CleanupOrphanedPodUsernsAllocations`); omitted → none.
   */
  userNamespaces?: {
    cleanupOrphans(known: (uid: string) => boolean): Promise<void>;
  };
  /** Told when a pod is removed, so liveness/startup probing stops during its termination. */
  prober?: { stopLivenessAndStartup(uid: string): Promise<void> };
  /**
   * Admission of new pods (upstream `canAdmitPod`): a rejected pod is known but never reaches
   * a pod worker; `reject` records its Failed status. Omitted → every pod is admitted.
   */
  admission?: PodAdmission;
  /**
   * In-place resize (upstream's allocation manager in `HandlePodAdditions`/`Updates`): pod
   * workers get each pod as allocated, a changed spec is evaluated as a resize, Deferred ones
   * are retried. Omitted → pods go to the workers as they are.
   */
  resize?: {
    allocations: AllocationManager;
    /** The node facts and admission a decision needs, at decision time. */
    environment(): ResizeEnvironment;
  };
}

/** Decides whether a new pod may run on this node, and records a refusal. */
export interface PodAdmission {
  admit(pod: Pod): { admit: true } | {
    admit: false;
    reason: string;
    message: string;
  };
  reject(pod: Pod, refusal: { reason: string; message: string }): void;
}

/** The kubelet's sync handler: a pod manager in front of the pod workers. */
export class PodSyncHandler implements SyncHandler {
  #deps: PodSyncHandlerDeps;
  #pods = new Map<string, Pod>();
  /** Pods refused at admission: kept as known, never synced. */
  #rejected = new Set<string>();
  #housekeepingLogged = false;
  #housekeeping = false;

  constructor(deps: PodSyncHandlerDeps) {
    this.#deps = deps;
  }

  /** True while a housekeeping pass runs (it awaits the runtime). */
  get housekeeping(): boolean {
    return this.#housekeeping;
  }

  /** Pods currently desired by the configuration. */
  pods(): Pod[] {
    return [...this.#pods.values()];
  }

  handlePodAdditions(pods: Pod[]): void {
    const sorted = [...pods].sort((a, b) =>
      creation(a).localeCompare(creation(b))
    );
    this.#log("ADD", sorted);
    for (const pod of sorted) {
      this.#pods.set(pod.metadata.uid!, pod);
      const result = this.#deps.admission?.admit(pod);
      if (result && !result.admit) {
        this.#rejected.add(pod.metadata.uid!);
        this.#deps.logger.info("Pod admission denied", {
          pod: podFullName(pod),
          reason: result.reason,
          message: result.message,
        });
        this.#deps.admission?.reject(pod, result);
        continue;
      }
      void this.#deps.resize?.allocations.addPod(pod);
      this.#deps.workers.updatePod({
        pod: this.#allocated(pod),
        updateType: "create",
      });
    }
    if (this.#deps.resize?.allocations.hasPending()) this.#retryResizes();
  }

  /** The pod as allocated (its spec when in-place resize is off). */
  #allocated(pod: Pod): Pod {
    return this.#deps.resize?.allocations.allocatedPod(pod) ?? pod;
  }

  #nextRetry = Number.NEGATIVE_INFINITY;

  /** Upstream `RetryPendingResizes`: pods whose resize state changed are synced. */
  #retryResizes(): void {
    const resize = this.#deps.resize;
    if (!resize || !this.#deps.allSourcesReady()) return;
    this.#nextRetry = this.#deps.clock.now() + RETRY_MS;
    void resize.allocations.retryPending(
      resize.environment(),
      (uid) => this.#pods.get(uid),
    ).then((touched) => {
      for (const pod of touched) {
        const latest = this.#pods.get(pod.metadata.uid!) ?? pod;
        this.#deps.workers.updatePod({
          pod: this.#allocated(latest),
          updateType: "sync",
        });
      }
    });
  }

  /** A spec change may be a resize: evaluated, and the pod synced when its state changed. */
  async #handleResize(pod: Pod): Promise<void> {
    const resize = this.#deps.resize;
    if (!resize) return;
    const changed = await resize.allocations.handleUpdate(
      pod,
      resize.environment(),
    );
    if (!changed) return;
    const latest = this.#pods.get(pod.metadata.uid!) ?? pod;
    this.#deps.workers.updatePod({
      pod: this.#allocated(latest),
      updateType: "sync",
    });
  }

  handlePodUpdates(pods: Pod[]): void {
    this.#log("UPDATE", pods);
    for (const pod of pods) {
      this.#pods.set(pod.metadata.uid!, pod);
      if (this.#rejected.has(pod.metadata.uid!)) continue;
      this.#deps.workers.updatePod({
        pod: this.#allocated(pod),
        updateType: "update",
      });
      if (this.#deps.resize && !pod.metadata.deletionTimestamp) {
        void this.#handleResize(pod).catch((error) =>
          this.#deps.logger.error("Failed to handle pod resources resize", {
            pod: podFullName(pod),
            err: errorMessage(error),
          })
        );
      }
    }
  }

  handlePodRemoves(pods: Pod[]): void {
    this.#log("REMOVE", pods);
    for (const pod of pods) {
      this.#pods.delete(pod.metadata.uid!);
      this.#rejected.delete(pod.metadata.uid!);
      void this.#deps.prober?.stopLivenessAndStartup(pod.metadata.uid!);
      this.#deps.workers.updatePod({ pod, updateType: "kill" });
    }
    // freed room may let a Deferred resize through
    if (pods.length && this.#deps.resize?.allocations.hasPending()) {
      this.#retryResizes();
    }
  }

  handlePodSet(pods: Pod[]): void {
    const next = new Set(pods.map((p) => p.metadata.uid!));
    const gone = [...this.#pods.values()].filter((p) =>
      !next.has(p.metadata.uid!)
    );
    if (gone.length) this.handlePodRemoves(gone);
    const added = pods.filter((p) => !this.#pods.has(p.metadata.uid!));
    const kept = pods.filter((p) => this.#pods.has(p.metadata.uid!));
    if (added.length) this.handlePodAdditions(added);
    if (kept.length) this.handlePodUpdates(kept);
  }

  handlePodReconcile(pods: Pod[]): void {
    for (const pod of pods) {
      const uid = pod.metadata.uid!;
      if (!this.#pods.has(uid)) continue;
      this.#pods.set(uid, pod);
      // another component changed a readiness gate condition: recompute Ready
      if (!this.#rejected.has(uid) && needsReadinessReconcile(pod)) {
        this.#deps.workers.updatePod({
          pod: this.#allocated(pod),
          updateType: "sync",
        });
      }
    }
  }

  handlePlegEvent(event: PodLifecycleEvent): void {
    if (event.type === "ContainerRemoved") return;
    const pod = this.#pods.get(event.podUid);
    if (!pod) return;
    this.#deps.logger.v(4).info("SyncLoop (PLEG): event for pod", {
      pod: podFullName(pod),
      event: event.type,
      id: event.id,
    });
    this.#deps.workers.updatePod({
      pod: this.#allocated(pod),
      updateType: "sync",
    });
  }

  handleProbeResult(podUid: string): void {
    const pod = this.#pods.get(podUid);
    if (!pod) return;
    this.#deps.logger.v(4).info("SyncLoop (probe): result changed", {
      pod: podFullName(pod),
    });
    this.#deps.workers.updatePod({
      pod: this.#allocated(pod),
      updateType: "sync",
    });
  }

  handleResync(): void {
    const { workers, clock } = this.#deps;
    for (const due of workers.duePods(clock.now())) {
      const pod = this.#pods.get(due.metadata.uid!) ?? due;
      workers.updatePod({ pod: this.#allocated(pod), updateType: "sync" });
    }
    const resize = this.#deps.resize;
    if (resize?.allocations.hasPending()) {
      if (this.#nextRetry === Number.NEGATIVE_INFINITY) {
        this.#nextRetry = clock.now() + INITIAL_RETRY_MS;
      } else if (clock.now() >= this.#nextRetry) this.#retryResizes();
    }
  }

  async handleHousekeeping(): Promise<void> {
    const { workers, logger } = this.#deps;
    if (!this.#deps.allSourcesReady()) {
      if (!this.#housekeepingLogged) {
        logger.v(2).info(
          "Skipping pod cleanup until every pod source has reported",
        );
        this.#housekeepingLogged = true;
      }
      return;
    }
    this.#housekeeping = true;
    try {
      const desired = new Set(this.#pods.keys());
      workers.syncKnownPods(desired);
      const statuses = this.#deps.statuses;
      for (const { uid } of statuses?.allStatuses() ?? []) {
        if (!desired.has(uid) && !workers.has(uid)) statuses?.removePod(uid);
      }
      await this.#killOrphans();
      await this.#podCgroupHousekeeping(desired);
      await this.#deps.userNamespaces?.cleanupOrphans((uid) =>
        desired.has(uid) || workers.has(uid)
      ).catch((error) =>
        logger.error(
          "Failed cleaning up orphaned pod user namespace allocations",
          {
            err: errorMessage(error),
          },
        )
      );
      // upstream `RemoveOrphanedPods`: allocations of pods no longer desired
      await this.#deps.resize?.allocations.removeOrphans(desired);
    } finally {
      this.#housekeeping = false;
    }
  }

  async #podCgroupHousekeeping(desired: ReadonlySet<string>): Promise<void> {
    const { workers, podCgroups, logger } = this.#deps;
    if (!podCgroups) return;
    // upstream GetActivePods: admitted pods that are neither terminal nor terminating
    const active = this.pods().filter((pod) =>
      workers.phaseOf(pod.metadata.uid ?? "") === "syncing"
    );
    try {
      await podCgroups.housekeeping(
        active,
        (uid) => desired.has(uid) || workers.has(uid),
      );
    } catch (error) {
      logger.error("Failed to clean up pod cgroups", {
        err: errorMessage(error),
      });
    }
  }

  /**
   * Upstream `HandlePodCleanups`: every running runtime pod without a pod worker goes to a new
   * worker that stops it with a 1 s grace override (raised to the 2 s minimum per container).
   * Only the list is awaited; the stops run in the workers, so the loop moves on at once.
   */
  async #killOrphans(): Promise<void> {
    const list = this.#deps.listRunningPods;
    if (!list) return;
    const { workers, logger } = this.#deps;
    for (const running of await list()) {
      if (workers.has(running.uid)) continue;
      logger.info("Stopping orphaned pod", {
        pod: `${running.namespace}/${running.name}`,
        podUID: running.uid,
      });
      workers.updatePod({
        pod: runningPodStandIn(running),
        updateType: "kill",
        runtimeOnly: true,
        gracePeriodSeconds: 1,
      });
    }
  }

  #log(op: string, pods: Pod[]): void {
    if (!pods.length) return;
    this.#deps.logger.info(`SyncLoop ${op}`, {
      pods: pods.map((p) => podFullName(p)),
    });
  }
}

function creation(pod: Pod): string {
  return pod.metadata.creationTimestamp ??
    pod.metadata.annotations?.[CONFIG_SEEN_ANNOTATION] ?? "";
}
