/**
 * Pod workers: one serialized worker per pod UID that drives the {@linkcode PodSyncer}.
 *
 * ```
 *            updatePod(create | update | sync)
 *                       │
 *                       ▼
 *   ┌──────────────► SYNCING ── syncPod() ok: requeue after syncFrequency (+0–50 % jitter),
 *   │ (resync,          │                    or after the result's `retryAfterMs` when sooner;
 *   │  PLEG event,      │        syncPod() rejected: requeue after backOffPeriod (+jitter)
 *   └── config update) ─┘
 *                       │ kill | deletionTimestamp | phase Succeeded/Failed | syncPod() → terminal
 *                       ▼        (the in-flight syncPod is aborted)
 *                  TERMINATING ── syncTerminatingPod(effective grace); rejected → retry after back-off;
 *                       │         a shorter grace aborts and restarts it
 *                       ▼
 *                  TERMINATED ─── syncTerminatedPod(); rejected → retry after back-off
 *                       │
 *                       ▼
 *                   FINISHED ──── ignored by updatePod(); forgotten by syncKnownPods() once the pod
 *                                 left the configuration (only then may the UID start again),
 *                                 or restarted by it when the same UID was created again
 * ```
 *
 * A runtime-only pod (`work.runtimeOnly`: an orphan housekeeping found running) starts in
 * TERMINATING, calls `syncTerminatingRuntimePod` and goes straight to FINISHED (upstream
 * `SyncTerminatingRuntimePod`); it never delays a static pod with the same full name.
 *
 * Contract:
 * - Calls for one UID never overlap. While a call runs, further updates are kept in a one-slot
 *   mailbox: only the latest pending update survives (latest update wins).
 * - A UID never returns to SYNCING once terminating.
 * - Two static pods with the same full name (`namespace/name`, e.g. an edited manifest: new
 *   content, new UID) are serialized: the newer one starts only after the older one finished.
 * - Effective grace period: starts at the recorded value; `deletionGracePeriodSeconds` and an
 *   explicit `gracePeriodSeconds` on the work can only lower it; otherwise the pod's
 *   `terminationGracePeriodSeconds` (30 when unset); never below 1.
 * - `stop()` aborts in-flight calls (the syncer stops issuing runtime calls) and waits for the
 *   workers; containers keep running. `whenIdle()` resolves when no worker is running.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { podFullName } from "../types.ts";
import type {
  Pod,
  PodSyncer,
  PodSyncOutcome,
  PodUpdateType,
  PodWork,
} from "../types.ts";
import { podWorkerDuration } from "../../metrics/mod.ts";
import type { HistogramChild } from "../../metrics/mod.ts";
import { errorMessage } from "../../util/error_message.ts";

/** `kubelet_pod_worker_duration_seconds` by operation type, bound once. */
const WORKER_DURATION: Readonly<Record<PodUpdateType, HistogramChild>> = {
  create: podWorkerDuration.labels("create"),
  update: podWorkerDuration.labels("update"),
  sync: podWorkerDuration.labels("sync"),
  kill: podWorkerDuration.labels("kill"),
};

/** Lifecycle phase of one pod worker. */
export type WorkerPhase = "syncing" | "terminating" | "terminated" | "finished";

/** Dependencies of {@linkcode PodWorkers}. */
export interface PodWorkersDeps {
  syncer: PodSyncer;
  clock: Clock;
  logger: Logger;
}

/** Options of {@linkcode PodWorkers}. */
export interface PodWorkersOptions {
  /** Requeue after a successful sync (`syncFrequency`, default 60 s). */
  resyncIntervalMs?: number;
  /** Requeue after a failed sync (default 10 s). */
  backOffPeriodMs?: number;
  /** Random source for jitter (default `Math.random`); tests pass `() => 0`. */
  random?: () => number;
  /** Aborting it stops the workers (same as `stop()`). */
  signal?: AbortSignal;
}

interface Worker {
  uid: string;
  fullName: string;
  phase: WorkerPhase;
  pod: Pod;
  pending: PodWork | undefined;
  running: boolean;
  inflight: AbortController | undefined;
  grace: number | undefined;
  requeueAt: number | undefined;
  /** UID of an older pod with the same full name that must finish first. */
  waitingFor: string | undefined;
  /** A finished UID was added again; `syncKnownPods` starts it afresh. */
  restartRequested: boolean;
  /** Deleted (deletionTimestamp, or a runtime-only orphan): GC may remove its content. */
  deleted: boolean;
  /** Evicted by the kubelet: GC may remove its content once it stopped. */
  evicted: boolean;
  /** Known only from the runtime (no spec). */
  runtimeOnly: boolean;
}

const TERMINAL_PHASES = new Set(["Succeeded", "Failed"]);

/** Per-UID serialized pod workers (see the module doc for the state machine). */
export class PodWorkers implements AsyncDisposable {
  #deps: PodWorkersDeps;
  #resync: number;
  #backOff: number;
  #random: () => number;
  #workers = new Map<string, Worker>();
  #stop = new AbortController();
  #loops = new Set<Promise<void>>();
  #idleWaiters: (() => void)[] = [];
  /** Set by the first `syncKnownPods`: every source reported, unknown UIDs are garbage. */
  #podsSynced = false;

  constructor(deps: PodWorkersDeps, options: PodWorkersOptions = {}) {
    this.#deps = deps;
    this.#resync = options.resyncIntervalMs ?? 60_000;
    this.#backOff = options.backOffPeriodMs ?? 10_000;
    this.#random = options.random ?? Math.random;
    options.signal?.addEventListener("abort", () => void this.stop(), {
      once: true,
    });
  }

  /**
   * Hands an update to the pod's worker, starting one if needed. A `kill` for an unknown UID
   * starts the worker directly in TERMINATING (stops whatever the runtime still runs for it).
   */
  updatePod(work: PodWork): void {
    if (this.#stop.signal.aborted) return;
    const uid = work.pod.metadata.uid;
    if (!uid) return;
    let w = this.#workers.get(uid);
    if (w && work.runtimeOnly && w.phase !== "syncing") {
      // a terminating or stopped pod may still be listed as running: its worker handles it
      return;
    }
    if (!w) {
      w = this.#newWorker(uid, work);
    }
    if (work.pod.metadata.deletionTimestamp) w.deleted = true;
    if (w.phase !== "syncing" && work.updateType === "create") {
      // The same UID was added again while or after it stopped (a static pod's manifest
      // removed and written again): housekeeping starts it afresh once it finished
      // (upstream restartRequested).
      w.restartRequested = true;
    }
    if (w.phase === "finished") {
      if (work.updateType === "create") w.pod = work.pod;
      this.#deps.logger.v(4).info(
        "Pod worker already finished, ignoring update",
        {
          pod: w.fullName,
          podUID: uid,
        },
      );
      return;
    }
    w.pod = work.pod;
    if (w.phase === "syncing" && wantsTermination(work)) {
      w.phase = "terminating";
      w.grace = effectiveGrace(w.grace, work);
      this.#deps.logger.info("Pod is terminating", {
        pod: w.fullName,
        podUID: uid,
        gracePeriod: w.grace,
      });
      w.inflight?.abort(new TransitionError());
    } else if (w.phase === "terminating") {
      const next = effectiveGrace(w.grace, work);
      if (w.grace !== undefined && next < w.grace) {
        w.inflight?.abort(new TransitionError());
      }
      w.grace = next;
    }
    w.pending = work;
    w.requeueAt = undefined;
    this.#kick(w);
  }

  /**
   * Upstream `killPodNow` for an eviction: the pod terminates with `gracePeriodSeconds` (never
   * raised by its own), and once stopped its content may be removed.
   */
  evictPod(pod: Pod, gracePeriodSeconds: number): void {
    this.updatePod({ pod, updateType: "kill", gracePeriodSeconds });
    const w = this.#workers.get(pod.metadata.uid ?? "");
    if (w) w.evicted = true;
  }

  /** Phase of a pod's worker, or undefined when the UID is unknown. */
  phaseOf(uid: string): WorkerPhase | undefined {
    return this.#workers.get(uid)?.phase;
  }

  /** True when the UID has a worker that is terminating or done. */
  isTerminationRequested(uid: string): boolean {
    const phase = this.#workers.get(uid)?.phase;
    return phase !== undefined && phase !== "syncing";
  }

  /**
   * True while a pod with this full name (`namespace/name`) is stopping its containers
   * (upstream `IsPodForMirrorPodTerminatingByFullName`): its mirror pod stays until then.
   * Runtime-only orphans do not count; terminated and finished pods no longer do.
   */
  isTerminatingByFullName(fullName: string): boolean {
    for (const w of this.#workers.values()) {
      if (
        w.fullName === fullName && w.phase === "terminating" && !w.runtimeOnly
      ) return true;
    }
    return false;
  }

  /** True when the UID has a worker (in any phase, finished included). */
  has(uid: string): boolean {
    return this.#workers.has(uid);
  }

  /**
   * Whether container GC may remove everything the runtime holds for the pod (upstream
   * `podWorkers.ShouldPodContentBeRemoved`): evicted, or deleted and stopped; a UID without a
   * worker once every source has reported (`syncKnownPods` ran).
   */
  shouldPodContentBeRemoved(uid: string): boolean {
    const w = this.#workers.get(uid);
    if (!w) return this.#podsSynced;
    return w.evicted || (w.deleted && isStopped(w.phase));
  }

  /**
   * Whether the pod's containers may go (upstream `ShouldPodRuntimeBeRemoved`): it stopped, or
   * it is unknown once every source has reported. Used when disk pressure GC removes the
   * content of pods that are not deleted.
   */
  shouldPodRuntimeBeRemoved(uid: string): boolean {
    const w = this.#workers.get(uid);
    if (!w) return this.#podsSynced;
    return isStopped(w.phase);
  }

  /** UIDs of workers that are not finished (their pods may still have running containers). */
  activeUids(): Set<string> {
    const out = new Set<string>();
    for (const w of this.#workers.values()) {
      if (w.phase !== "finished") out.add(w.uid);
    }
    return out;
  }

  /** The latest pods of workers whose requeue time has come (the sync loop re-syncs them). */
  duePods(now: number): Pod[] {
    const out: Pod[] = [];
    for (const w of this.#workers.values()) {
      if (w.requeueAt !== undefined && w.requeueAt <= now && !w.pending) {
        out.push(w.pod);
      }
    }
    return out;
  }

  /**
   * Housekeeping: workers of pods no longer desired are killed (if still syncing) and finished
   * workers of such pods are forgotten, so their UIDs may start again. A finished UID that was
   * added again (a `create` after it finished) is forgotten and started afresh.
   */
  syncKnownPods(desired: Set<string>): void {
    this.#podsSynced = true;
    for (const w of [...this.#workers.values()]) {
      if (w.phase === "finished" && w.restartRequested && desired.has(w.uid)) {
        this.#workers.delete(w.uid);
        this.updatePod({ pod: w.pod, updateType: "create" });
        continue;
      }
      if (desired.has(w.uid)) continue;
      if (w.phase === "finished") this.#workers.delete(w.uid);
      else if (w.phase === "syncing") {
        this.updatePod({ pod: w.pod, updateType: "kill" });
      }
    }
  }

  /** Resolves once no worker is running a call. */
  whenIdle(): Promise<void> {
    if (this.#loops.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Aborts in-flight calls and waits for every worker to return. Safe to call twice. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error("pod workers stopped"));
    for (const w of this.#workers.values()) {
      w.inflight?.abort(this.#stop.signal.reason);
    }
    while (this.#loops.size) await Promise.all([...this.#loops]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  #newWorker(uid: string, work: PodWork): Worker {
    const fullName = podFullName(work.pod);
    const older = work.runtimeOnly ? undefined : [...this.#workers.values()]
      .find((o) =>
        o.fullName === fullName && o.phase !== "finished" && !o.runtimeOnly
      );
    const kill = work.updateType === "kill" || work.runtimeOnly === true;
    const w: Worker = {
      uid,
      fullName,
      phase: kill ? "terminating" : "syncing",
      pod: work.pod,
      pending: undefined,
      running: false,
      inflight: undefined,
      grace: kill ? effectiveGrace(undefined, work) : undefined,
      requeueAt: undefined,
      waitingFor: older?.uid,
      restartRequested: false,
      deleted: work.runtimeOnly === true,
      evicted: false,
      runtimeOnly: work.runtimeOnly === true,
    };
    this.#workers.set(uid, w);
    return w;
  }

  #kick(w: Worker): void {
    if (w.running || !w.pending) return;
    if (w.waitingFor) {
      const older = this.#workers.get(w.waitingFor);
      if (older && older.phase !== "finished") return;
      w.waitingFor = undefined;
    }
    w.running = true;
    const loop = this.#run(w).finally(() => {
      w.running = false;
      this.#loops.delete(loop);
      if (this.#loops.size === 0) {
        for (const resolve of this.#idleWaiters.splice(0)) resolve();
      }
    });
    this.#loops.add(loop);
  }

  async #run(w: Worker): Promise<void> {
    while (w.pending && !this.#stop.signal.aborted) {
      const work = w.pending;
      w.pending = undefined;
      await this.#step(w, work);
    }
    if (w.phase === "finished") this.#releaseSuccessors(w);
  }

  async #step(w: Worker, work: PodWork): Promise<void> {
    const { syncer, clock } = this.#deps;
    const log = this.#deps.logger.with({ pod: w.fullName, podUID: w.uid });
    const ac = new AbortController();
    const signal = AbortSignal.any([ac.signal, this.#stop.signal]);
    w.inflight = ac;
    const phase = w.phase;
    try {
      if (phase === "syncing") {
        const started = clock.now();
        let outcome: PodSyncOutcome;
        try {
          outcome = await syncer.syncPod(
            { pod: w.pod, updateType: work.updateType },
            signal,
          );
        } finally {
          WORKER_DURATION[work.updateType].observe(
            (clock.now() - started) / 1000,
          );
        }
        if (w.phase !== "syncing") return; // terminated meanwhile: pending holds the kill
        if (outcome.terminal) {
          log.info("Pod reached a terminal phase, terminating");
          w.phase = "terminating";
          w.grace = effectiveGrace(w.grace, { pod: w.pod, updateType: "kill" });
          w.pending ??= { pod: w.pod, updateType: "sync" };
          return;
        }
        let at = clock.now() + this.#jitter(this.#resync);
        if (outcome.retryAfterMs !== undefined) {
          at = Math.min(at, clock.now() + outcome.retryAfterMs);
        }
        w.requeueAt = at;
      } else if (phase === "terminating") {
        const grace = w.grace ??
          effectiveGrace(undefined, { pod: w.pod, updateType: "kill" });
        const kill: PodWork = {
          pod: w.pod,
          updateType: "kill",
          gracePeriodSeconds: grace,
        };
        if (w.runtimeOnly) {
          kill.runtimeOnly = true;
          await (syncer.syncTerminatingRuntimePod ?? syncer.syncTerminatingPod)
            .call(syncer, kill, signal);
        } else {
          await syncer.syncTerminatingPod(kill, signal);
        }
        if (w.pending && ac.signal.aborted) return; // grace shortened: run again
        log.info("Pod containers stopped");
        if (w.runtimeOnly) {
          // nothing of an orphan is left to finish: GC removes its content
          w.phase = "finished";
          w.pending = undefined;
          return;
        }
        w.phase = "terminated";
        w.pending = { pod: w.pod, updateType: "kill" };
      } else if (phase === "terminated") {
        await syncer.syncTerminatedPod(
          { pod: w.pod, updateType: "kill" },
          signal,
        );
        log.info("Pod terminated and cleaned up");
        w.phase = "finished";
        w.pending = undefined;
      }
    } catch (cause) {
      if (this.#stop.signal.aborted) return;
      if (ac.signal.aborted && ac.signal.reason instanceof TransitionError) {
        w.pending ??= { pod: w.pod, updateType: "kill" };
        return;
      }
      log.error("Error syncing pod, skipping", {
        phase,
        err: errorMessage(cause),
      });
      w.requeueAt = clock.now() + this.#jitter(this.#backOff);
    } finally {
      if (w.inflight === ac) w.inflight = undefined;
    }
  }

  #releaseSuccessors(done: Worker): void {
    for (const w of this.#workers.values()) {
      if (w.waitingFor === done.uid) this.#kick(w);
    }
  }

  #jitter(ms: number): number {
    return ms * (1 + 0.5 * this.#random());
  }
}

class TransitionError extends Error {
  constructor() {
    super("Pod worker is changing state");
    this.name = "TransitionError";
  }
}

function isStopped(phase: WorkerPhase): boolean {
  return phase === "terminated" || phase === "finished";
}

function wantsTermination(work: PodWork): boolean {
  const pod = work.pod;
  return work.updateType === "kill" || !!pod.metadata.deletionTimestamp ||
    TERMINAL_PHASES.has(pod.status?.phase ?? "");
}

/** Effective grace period in seconds (see the module doc); exported for tests. */
export function effectiveGrace(
  recorded: number | undefined,
  work: PodWork,
): number {
  let grace = recorded;
  const fromApi = work.pod.metadata.deletionGracePeriodSeconds;
  let lowered = false;
  for (const candidate of [fromApi, work.gracePeriodSeconds]) {
    if (candidate === undefined) continue;
    if (grace === undefined || candidate < grace) grace = candidate;
    lowered = true;
  }
  if (!lowered && grace === undefined) {
    grace = work.pod.spec.terminationGracePeriodSeconds ?? 30;
  }
  return Math.max(1, grace ?? 30);
}
