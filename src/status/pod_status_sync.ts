/**
 * The API server half of the status manager (upstream `status_manager.go` `syncPod`): writes
 * the cached statuses of the node's pods to their pod objects, and deletes pods whose graceful
 * deletion the kubelet has finished.
 *
 * - A status change wakes the loop at once; every `syncPeriodMs` (10 s) every pod whose latest
 *   version was not written yet (a failed write) is tried again, so the latest status is never
 *   lost, and so is every API pod whose watched status differs from ours.
 * - Each write GETs the pod, skips it when the UID differs (the pod was recreated), and sends a
 *   two-way merge patch with the UID precondition only when something changed. A 409 retries
 *   with a fresh GET.
 * - Pods from the API server with a deletionTimestamp, once their containers are gone
 *   (`podTerminated`), get their final status written and are deleted with
 *   `gracePeriodSeconds: 0` and a UID precondition, so a new pod with the same name survives;
 *   never while a newer status than the one this pass holds waits to be written.
 * - Static pods' statuses go to their mirror pod (`mirrorPodOf`); mirror pods are never
 *   deleted here.
 * - A terminal phase (Succeeded, Failed) reaches the API only once the pod's containers are
 *   stopped (`podTerminated`): until then the API's phase, reason and message are kept
 *   (upstream `mergePodStatus`), and the pod is looked at again every second.
 * @module
 */
import {
  ApiConflictError,
  ApiNotFoundError,
  type Pod,
  type PodApi,
  type PodStatus,
} from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { podStatusPatch } from "./pod_status_patch.ts";
import type { PodStatusManager } from "./types.ts";
import { errorMessage } from "../util/error_message.ts";

const CONFIG_SOURCE = "kubernetes.io/config.source";

function isTerminal(phase: string | undefined): boolean {
  return phase === "Succeeded" || phase === "Failed";
}

const DISRUPTION_TARGET = "DisruptionTarget";

/**
 * `status` with the API's phase, reason and message while the API's phase is not terminal:
 * a pod whose containers may still run is not reported finished. Its `DisruptionTarget`
 * condition waits too (upstream sends it only with the terminal phase).
 */
function withPhaseOf(status: PodStatus, api: PodStatus | undefined): PodStatus {
  if (isTerminal(api?.phase)) return status;
  const { phase: _p, reason: _r, message: _m, ...rest } = status;
  const conditions = status.conditions?.filter((c) =>
    c.type !== DISRUPTION_TARGET
  );
  return {
    ...rest,
    ...(conditions ? { conditions } : {}),
    ...(api?.phase ? { phase: api.phase } : {}),
    ...(api?.reason ? { reason: api.reason } : {}),
    ...(api?.message ? { message: api.message } : {}),
  };
}

/**
 * A `DisruptionTarget` condition the API does not hold yet gets the time it is sent as its
 * transition time, as upstream stamps it when it finally sends it.
 */
function stampDisruptionTarget(
  status: PodStatus,
  api: PodStatus | undefined,
  now: string,
): PodStatus {
  const ours = status.conditions?.find((c) => c.type === DISRUPTION_TARGET);
  const theirs = api?.conditions?.find((c) => c.type === DISRUPTION_TARGET);
  if (!ours || theirs?.status === ours.status) return status;
  return {
    ...status,
    conditions: status.conditions!.map((c) =>
      c === ours ? { ...c, lastTransitionTime: now } : c
    ),
  };
}
const TERMINATION_POLL_MS = 1_000;

/** Where a pod's status is written. */
export interface StatusTarget {
  namespace: string;
  name: string;
  uid: string;
}

/** Dependencies of {@linkcode PodStatusSync}. */
export interface PodStatusSyncDeps {
  api: Pick<PodApi, "getPod" | "patchPodStatus" | "deletePod">;
  statuses: Pick<PodStatusManager, "allStatuses" | "onChange">;
  clock: Clock;
  logger: Logger;
  /** The pods currently configured (all sources), for their source and deletion state. */
  pods: () => Pod[];
  /** True once no container of the pod can still be running. */
  podTerminated: (uid: string) => boolean;
  /** A static pod's mirror pod; undefined while it has none. */
  mirrorPodOf?: (pod: Pod) => StatusTarget | undefined;
}

/** Options of {@linkcode PodStatusSync}. */
export interface PodStatusSyncOptions {
  /** Full resync period (upstream 10 s). */
  syncPeriodMs?: number;
  /** Immediate retries of a write after 409 Conflict (default 3). */
  conflictRetries?: number;
}

/** Writes pod statuses to the API server; `run` until the signal aborts. */
export class PodStatusSync {
  #deps: PodStatusSyncDeps;
  #periodMs: number;
  #retries: number;
  /**
   * Version of the status last written and the API object (a static pod's mirror) it went
   * to, by pod UID: a recreated mirror pod gets the status again.
   */
  #written = new Map<string, { version: number; target: string }>();
  /** UIDs whose pod object was deleted by us. */
  #deleted = new Set<string>();
  /** The newest status version of each pod, as the manager announced it. */
  #latest = new Map<string, number>();
  #dirty = new Set<string>();
  /** Deleted pods whose containers may still run: checked again every second. */
  #awaitingTermination = new Set<string>();
  #wake: (() => void) | undefined;

  constructor(deps: PodStatusSyncDeps, options: PodStatusSyncOptions = {}) {
    this.#deps = deps;
    this.#periodMs = options.syncPeriodMs ?? 10_000;
    this.#retries = options.conflictRetries ?? 3;
    this.#deps.statuses.onChange((change) => {
      if (change.kind === "removed") {
        this.#written.delete(change.uid);
        this.#deleted.delete(change.uid);
        this.#latest.delete(change.uid);
        return;
      }
      this.#latest.set(change.entry.uid, change.entry.version);
      this.#dirty.add(change.entry.uid);
      this.#wake?.();
    });
  }

  /** Loops until `signal` aborts: writes on every change and every period. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.#deps;
    let nextFull = clock.now();
    while (!signal.aborted) {
      const full = clock.now() >= nextFull;
      if (full) nextFull = clock.now() + this.#periodMs;
      await this.syncBatch(full, signal);
      if (signal.aborted || this.#dirty.size) continue;
      let waitMs = Math.max(0, nextFull - clock.now());
      if (this.#awaitingTermination.size) {
        // Termination ends without a status change; look again soon.
        waitMs = Math.min(waitMs, TERMINATION_POLL_MS);
        for (const uid of this.#awaitingTermination) this.#dirty.add(uid);
        this.#awaitingTermination.clear();
      }
      const wait = new AbortController();
      this.#wake = () => wait.abort();
      await clock.sleep(waitMs, AbortSignal.any([signal, wait.signal]))
        .catch(() => {});
      this.#wake = undefined;
    }
  }

  /**
   * One pass: the changed pods, or (`full`) every pod with a cached status. Failures are
   * logged and left for the next pass.
   */
  async syncBatch(full: boolean, signal?: AbortSignal): Promise<void> {
    const all = this.#deps.pods();
    const uids = full
      ? new Set([
        ...this.#deps.statuses.allStatuses().map((s) => s.uid),
        // a deleted pod that never got a status must still be deleted
        ...all.filter((p) => p.metadata.deletionTimestamp).map((p) =>
          p.metadata.uid!
        ),
      ])
      : new Set(this.#dirty);
    this.#dirty.clear();
    if (!uids.size) return;
    const pods = new Map(all.map((p) => [p.metadata.uid!, p]));
    const statuses = new Map(
      this.#deps.statuses.allStatuses().map((s) => [s.uid, s]),
    );
    for (const uid of uids) {
      if (signal?.aborted) return;
      const pod = pods.get(uid);
      const entry = statuses.get(uid);
      if (!pod) continue;
      try {
        await this.#syncPod(pod, entry, full, signal);
      } catch (cause) {
        if (signal?.aborted) return;
        this.#deps.logger.error("Failed to update the pod status", {
          pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
          err: errorMessage(cause),
        });
      }
    }
  }

  async #syncPod(
    pod: Pod,
    entry: { version: number; status: PodStatus } | undefined,
    full: boolean,
    signal?: AbortSignal,
  ): Promise<void> {
    const uid = pod.metadata.uid!;
    if (this.#deleted.has(uid)) return;
    const fromApi = pod.metadata.annotations?.[CONFIG_SOURCE] === "api";
    const target = fromApi
      ? {
        namespace: pod.metadata.namespace ?? "default",
        name: pod.metadata.name ?? "",
        uid,
      }
      : this.#deps.mirrorPodOf?.(pod);
    if (!target) return;
    // A newer status came while this pass was busy with other pods: it is queued, and the pod
    // is never deleted before it is written (its terminal phase would be lost, and with it
    // what a finalizer such as the Job controller's waits for).
    if ((this.#latest.get(uid) ?? 0) > (entry?.version ?? 0)) return;
    const deleting = fromApi && !!pod.metadata.deletionTimestamp;
    const deletable = deleting && this.#deps.podTerminated(uid);
    if (deleting && !deletable) this.#awaitingTermination.add(uid);
    // The full pass also repairs an API status someone else changed (upstream
    // `needsReconcile`), judged from the watched copy without a GET.
    const written = this.#written.get(uid);
    const stale = entry && (written?.version !== entry.version ||
      written.target !== target.uid ||
      (full && fromApi && podStatusPatch(uid, pod.status, entry.status)));
    if (entry && stale) {
      const running = isTerminal(entry.status.phase) &&
        !this.#deps.podTerminated(uid);
      const ok = await this.#writeStatus(target, entry.status, {
        holdTerminalPhase: running,
        ...(signal ? { signal } : {}),
      });
      if (!ok) return;
      // a held-back phase is written again once the containers are stopped
      if (running) this.#awaitingTermination.add(uid);
      else {
        this.#written.set(uid, { version: entry.version, target: target.uid });
      }
    }
    if (deletable) await this.#delete(target, signal);
  }

  /** Writes the status; false when the pod is gone or was recreated (nothing to write). */
  async #writeStatus(
    target: StatusTarget,
    desired: PodStatus,
    write: { holdTerminalPhase: boolean; signal?: AbortSignal },
  ): Promise<boolean> {
    const { api, logger } = this.#deps;
    const options = write.signal ? { signal: write.signal } : {};
    for (let attempt = 0;; attempt++) {
      const current = await api.getPod(target.namespace, target.name, options);
      if (!current) return false;
      if (current.metadata.uid !== target.uid) {
        logger.v(3).info(
          "Pod was deleted and then recreated; skipping status update",
          {
            pod: `${target.namespace}/${target.name}`,
            oldUID: target.uid,
            newUID: current.metadata.uid,
          },
        );
        return false;
      }
      const status = write.holdTerminalPhase
        ? withPhaseOf(desired, current.status)
        : stampDisruptionTarget(
          desired,
          current.status,
          new Date(this.#deps.clock.now()).toISOString().replace(
            /\.\d+Z$/,
            "Z",
          ),
        );
      const patch = podStatusPatch(target.uid, current.status, status);
      if (!patch) return true;
      try {
        await api.patchPodStatus(target.namespace, target.name, patch, options);
        logger.v(3).info("Patched pod status", {
          pod: `${target.namespace}/${target.name}`,
          phase: status.phase,
          changed: Object.keys(patch.status),
        });
        return true;
      } catch (cause) {
        if (!(cause instanceof ApiConflictError) || attempt >= this.#retries) {
          throw cause;
        }
      }
    }
  }

  async #delete(target: StatusTarget, signal?: AbortSignal): Promise<void> {
    try {
      await this.#deps.api.deletePod(target.namespace, target.name, {
        gracePeriodSeconds: 0,
        uid: target.uid,
      }, signal ? { signal } : {});
      this.#deps.logger.info("Pod fully terminated and removed from the API", {
        pod: `${target.namespace}/${target.name}`,
      });
    } catch (cause) {
      // Gone already, or a different pod now has the name: nothing of ours is left to delete.
      if (
        !(cause instanceof ApiNotFoundError) &&
        !(cause instanceof ApiConflictError)
      ) throw cause;
    }
    this.#deleted.add(target.uid);
  }
}
