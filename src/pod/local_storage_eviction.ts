/**
 * Local storage eviction of one pod (upstream eviction manager `localStorageEviction` →
 * `emptyDirLimitEviction`): a pod whose emptyDir (disk or `medium: Memory`) holds more than
 * its `sizeLimit` is evicted: phase Failed, reason `Evicted`, upstream's message, a
 * `DisruptionTarget` condition, a Warning `Evicted` event, and its containers stopped.
 *
 * Upstream measures every eviction-monitoring period (10 s); here the pod syncer measures at
 * each sync and requeues pods that have a size-limited emptyDir after that period.
 *
 * @module
 */
import { quantityValue } from "../util/quantity.ts";
import type { Pod, PodCondition, PodStatus } from "./types.ts";

/** The status reason (and event reason) of an evicted pod. */
export const EVICTED_REASON = "Evicted";
/** How often a pod with a size-limited emptyDir is measured (upstream monitoring period). */
export const EVICTION_MONITORING_PERIOD_MS = 10_000;
/** The condition upstream adds to a pod the kubelet evicts. */
const DISRUPTION_TARGET = "DisruptionTarget";
const TERMINATION_BY_KUBELET = "TerminationByKubelet";

/** Upstream's message for an emptyDir over its limit (Go `%q` quoting, trailing space). */
export function emptyDirEvictionMessage(volume: string, limit: string): string {
  return `Usage of EmptyDir volume ${
    JSON.stringify(volume)
  } exceeds the limit ${JSON.stringify(limit)}. `;
}

/** Whether the pod has an emptyDir with a positive `sizeLimit` (what gets measured). */
export function hasSizeLimitedEmptyDir(pod: Pod): boolean {
  return (pod.spec.volumes ?? []).some((v) => {
    const limit = (v.emptyDir as { sizeLimit?: unknown } | undefined)
      ?.sizeLimit;
    if (limit === undefined || limit === null) return false;
    try {
      return quantityValue(String(limit)) > 0;
    } catch {
      return false; // volume set-up reports the bad quantity
    }
  });
}

/**
 * `status` as upstream's eviction status function leaves it: Failed, `Evicted`, the message
 * and a `DisruptionTarget` condition (its transition time kept from `previous`).
 */
export function evictedStatus(
  status: PodStatus,
  message: string,
  previous: PodStatus | undefined,
  now: string,
): PodStatus {
  const before = previous?.conditions?.find((c) =>
    c.type === DISRUPTION_TARGET
  );
  const condition: PodCondition = {
    type: DISRUPTION_TARGET,
    status: "True",
    reason: TERMINATION_BY_KUBELET,
    message,
    lastTransitionTime: before?.status === "True" && before.lastTransitionTime
      ? before.lastTransitionTime
      : now,
  };
  return {
    ...status,
    phase: "Failed",
    reason: EVICTED_REASON,
    message,
    conditions: [
      ...(status.conditions ?? []).filter((c) => c.type !== DISRUPTION_TARGET),
      condition,
    ],
  };
}
