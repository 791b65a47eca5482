/**
 * The node's record of in-place resize (upstream `allocation.Manager` with the status
 * manager's resize conditions): the resources allocated to and actuated for each container,
 * kept in upstream's checkpoints, the pods whose resize waits (Deferred) and their retries,
 * and the `PodResizePending` / `PodResizeInProgress` conditions. Decisions are the pure
 * functions of `allocation.ts`; this module only keeps state and writes the checkpoints.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { Pod, PodCondition, ResourceRequirements } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";
import {
  ACTUATED_PODS_STATE,
  ALLOCATED_PODS_STATE,
  type CheckpointFiles,
  decodeCheckpoint,
  encodeCheckpoint,
  type PodAllocations,
} from "./allocation_checkpoint.ts";
import {
  allocationFromPod,
  decideResize,
  pendingOrder,
  podWithAllocation,
  type ResizeContext,
  resizeInProgress,
} from "./allocation.ts";
import { podRequests } from "../cgroups/pod_resources.ts";

/** Upstream's first and later periods of retrying Deferred resizes. */
export const INITIAL_RETRY_MS = 30_000;
export const RETRY_MS = 180_000;

/** The node facts a resize decision needs, asked for at decision time. */
export type ResizeEnvironment = Omit<ResizeContext, "allocated" | "changed">;

/** Conditions of one pod. */
interface ResizeConditions {
  pending?: PodCondition;
  inProgress?: PodCondition;
}

/** What the sync handler, the syncer and the status ask of in-place resize. */
export interface AllocationManager {
  /** Reads the checkpoints (a corrupt one is an error naming the file). */
  load(): Promise<void>;
  /** The pod with its containers' resources as allocated (the spec when none is recorded). */
  allocatedPod(pod: Pod): Pod;
  /** A newly admitted pod: its allocation is the spec (or what a checkpoint kept). */
  addPod(pod: Pod): Promise<void>;
  /**
   * A pod's spec may have been resized: evaluate it now (and queue it when Deferred).
   * Returns true when an allocation changed and the pod must be synced.
   */
  handleUpdate(pod: Pod, env: ResizeEnvironment): Promise<boolean>;
  /** Re-evaluates the queued resizes; returns the pods whose state changed. */
  retryPending(
    env: ResizeEnvironment,
    pods: (uid: string) => Pod | undefined,
  ): Promise<Pod[]>;
  /** Whether resizes wait to be retried. */
  hasPending(): boolean;
  /** Records what was applied to a container (its start or an in-place update). */
  setActuated(
    uid: string,
    name: string,
    resources: ResourceRequirements | undefined,
  ): Promise<void>;
  /** What was last applied to a container. */
  actuated(uid: string, name: string): ResourceRequirements | undefined;
  /**
   * Upstream `CheckPodResizeInProgress`: sets or clears `PodResizeInProgress` from the
   * allocated pod and its running containers; true when it was just cleared (completed).
   */
  checkInProgress(allocated: Pod, running: (name: string) => boolean): boolean;
  /** A resize that failed to apply: `PodResizeInProgress` with reason Error. */
  resizeFailed(pod: Pod, message: string): void;
  /** The pod's resize conditions for its status. */
  conditions(uid: string): PodCondition[];
  /** Terminal pods carry no resize conditions. */
  clearConditions(uid: string): void;
  /** Drops every record of pods not in `keep`. */
  removeOrphans(keep: ReadonlySet<string>): Promise<void>;
}

/** Dependencies of {@linkcode createAllocationManager}. */
export interface AllocationManagerDeps {
  files: CheckpointFiles;
  clock: Pick<Clock, "now">;
  logger: Logger;
}

function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(
    ".000Z",
    "Z",
  );
}

/** Builds the manager; {@linkcode AllocationManager.load} reads the checkpoints. */
export function createAllocationManager(
  deps: AllocationManagerDeps,
): AllocationManager {
  const { files, clock, logger } = deps;
  let allocated: PodAllocations = new Map();
  let actuated: PodAllocations = new Map();
  const conditions = new Map<string, ResizeConditions>();
  let pending: string[] = [];

  const save = async (name: string, state: PodAllocations) => {
    try {
      await files.write(name, encodeCheckpoint(state));
    } catch (error) {
      logger.error("Failed to write the allocation checkpoint", {
        checkpoint: name,
        err: errorMessage(error),
      });
    }
  };

  const condition = (
    type: string,
    old: PodCondition | undefined,
    reason: string,
    message: string,
    generation: number | undefined,
  ): PodCondition => {
    const now = rfc3339(clock.now());
    return {
      type,
      status: "True",
      lastProbeTime: now,
      lastTransitionTime: old && (old.reason ?? "") === reason
        ? old.lastTransitionTime ?? now
        : now,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  };
  const entry = (uid: string) => {
    let c = conditions.get(uid);
    if (!c) conditions.set(uid, c = {});
    return c;
  };
  const setInProgress = (
    uid: string,
    reason: string,
    message: string,
    generation: number | undefined,
  ) => {
    const c = entry(uid);
    const old = c.inProgress;
    if (old && !reason && !message) {
      reason = old.reason ?? "";
      message = old.message ?? "";
    }
    // an existing condition keeps the generation it was first set at
    const gen = old ? old.observedGeneration : generation;
    c.inProgress = condition("PodResizeInProgress", old, reason, message, gen);
  };

  const handle = async (pod: Pod, env: ResizeEnvironment) => {
    const uid = pod.metadata.uid ?? "";
    const { pod: current, changed } = podWithAllocation(
      pod,
      allocated.get(uid),
    );
    const decision = decideResize(pod, { ...env, allocated: current, changed });
    const c = entry(uid);
    const generation = pod.metadata.generation;
    switch (decision.kind) {
      case "none":
        delete c.pending;
        return false;
      case "infeasible":
        c.pending = condition(
          "PodResizePending",
          c.pending,
          "Infeasible",
          decision.message,
          generation,
        );
        return false;
      case "deferred":
        c.pending = condition(
          "PodResizePending",
          c.pending,
          "Deferred",
          decision.message,
          generation,
        );
        return false;
      case "accept":
        allocated.set(uid, allocationFromPod(pod));
        await save(ALLOCATED_PODS_STATE, allocated);
        delete c.pending;
        delete c.inProgress;
        setInProgress(uid, "", "", generation);
        return true;
    }
  };

  const isIncreasing = (pod: Pod) => {
    const { pod: current, changed } = podWithAllocation(
      pod,
      allocated.get(pod.metadata.uid ?? ""),
    );
    if (!changed) return false;
    const before = podRequests(current);
    const after = podRequests(pod);
    return ["cpu", "memory"].some((r) =>
      (after.get(r) ?? 0) > (before.get(r) ?? 0)
    );
  };

  return {
    async load() {
      for (const name of [ALLOCATED_PODS_STATE, ACTUATED_PODS_STATE]) {
        const text = await files.read(name);
        const state = text === undefined
          ? new Map()
          : decodeCheckpoint(text, name);
        if (name === ALLOCATED_PODS_STATE) allocated = state;
        else actuated = state;
      }
    },
    allocatedPod(pod) {
      return podWithAllocation(pod, allocated.get(pod.metadata.uid ?? "")).pod;
    },
    async addPod(pod) {
      const uid = pod.metadata.uid ?? "";
      const kept = allocated.get(uid);
      // a pod known from a checkpoint keeps its allocation; its resize is queued
      const base = podWithAllocation(pod, kept);
      allocated.set(uid, allocationFromPod(base.pod));
      await save(ALLOCATED_PODS_STATE, allocated);
      if (base.changed && !pending.includes(uid)) pending.push(uid);
      for (const c of pod.status?.conditions ?? []) {
        // upstream `BackfillPodResizeConditions` after a restart
        if (c.type === "PodResizePending") entry(uid).pending ??= { ...c };
        if (c.type === "PodResizeInProgress") {
          entry(uid).inProgress ??= { ...c };
        }
      }
    },
    async handleUpdate(pod, env) {
      const uid = pod.metadata.uid ?? "";
      const { changed } = podWithAllocation(pod, allocated.get(uid));
      if (!changed) {
        // a pending resize was reverted
        const c = conditions.get(uid);
        if (c) delete c.pending;
        pending = pending.filter((p) => p !== uid);
        return false;
      }
      if (!pending.includes(uid)) pending.push(uid);
      const before = JSON.stringify(conditions.get(uid) ?? {});
      const accepted = await handle(pod, env);
      const deferred = conditions.get(uid)?.pending?.reason === "Deferred";
      if (!deferred) pending = pending.filter((p) => p !== uid);
      return accepted || before !== JSON.stringify(conditions.get(uid) ?? {});
    },
    async retryPending(env, pods) {
      const known = pending.map((uid) => pods(uid)).filter((p): p is Pod =>
        !!p
      );
      known.sort((a, b) =>
        pendingOrder(
          {
            pod: a,
            increasing: isIncreasing(a),
            ...(conditions.get(a.metadata.uid ?? "")?.pending
                ?.lastTransitionTime
              ? {
                pendingSince: conditions.get(a.metadata.uid ?? "")!.pending!
                  .lastTransitionTime!,
              }
              : {}),
          },
          {
            pod: b,
            increasing: isIncreasing(b),
            ...(conditions.get(b.metadata.uid ?? "")?.pending
                ?.lastTransitionTime
              ? {
                pendingSince: conditions.get(b.metadata.uid ?? "")!.pending!
                  .lastTransitionTime!,
              }
              : {}),
          },
        )
      );
      const next: string[] = [];
      const touched: Pod[] = [];
      for (const pod of known) {
        const uid = pod.metadata.uid ?? "";
        const before = JSON.stringify(conditions.get(uid) ?? {});
        let accepted = false;
        try {
          accepted = await handle(pod, env);
        } catch (error) {
          logger.error("Failed to handle pod resources resize", {
            err: errorMessage(error),
          });
          next.push(uid);
          continue;
        }
        if (conditions.get(uid)?.pending?.reason === "Deferred") next.push(uid);
        if (accepted || before !== JSON.stringify(conditions.get(uid) ?? {})) {
          touched.push(pod);
        }
      }
      pending = next;
      return touched;
    },
    hasPending() {
      return pending.length > 0;
    },
    async setActuated(uid, name, resources) {
      let pod = actuated.get(uid);
      if (!pod) actuated.set(uid, pod = new Map());
      pod.set(name, {
        ...(resources?.limits ? { limits: { ...resources.limits } } : {}),
        ...(resources?.requests ? { requests: { ...resources.requests } } : {}),
      });
      await save(ACTUATED_PODS_STATE, actuated);
    },
    actuated(uid, name) {
      return actuated.get(uid)?.get(name);
    },
    checkInProgress(pod, running) {
      const uid = pod.metadata.uid ?? "";
      const actuatedOf = (name: string) =>
        actuated.get(uid)?.get(name) ??
          pod.spec.containers.concat(pod.spec.initContainers ?? []).find((c) =>
            c.name === name
          )?.resources;
      if (resizeInProgress(pod, running, actuatedOf)) {
        setInProgress(uid, "", "", pod.metadata.generation);
        return false;
      }
      const c = conditions.get(uid);
      if (!c?.inProgress) return false;
      delete c.inProgress;
      return true;
    },
    resizeFailed(pod, message) {
      setInProgress(
        pod.metadata.uid ?? "",
        "Error",
        message,
        pod.metadata.generation,
      );
    },
    conditions(uid) {
      const c = conditions.get(uid);
      return [c?.pending, c?.inProgress].filter((x): x is PodCondition => !!x);
    },
    clearConditions(uid) {
      conditions.delete(uid);
    },
    async removeOrphans(keep) {
      let changed = false;
      for (const state of [allocated, actuated]) {
        for (const uid of [...state.keys()]) {
          if (!keep.has(uid)) {
            state.delete(uid);
            changed = true;
          }
        }
      }
      for (const uid of [...conditions.keys()]) {
        if (!keep.has(uid)) conditions.delete(uid);
      }
      pending = pending.filter((uid) => keep.has(uid));
      if (changed) {
        await save(ALLOCATED_PODS_STATE, allocated);
        await save(ACTUATED_PODS_STATE, actuated);
      }
    },
  };
}
