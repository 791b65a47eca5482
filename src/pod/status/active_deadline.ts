/**
 * `spec.activeDeadlineSeconds` (upstream `activeDeadlineHandler`): a pod active on the node for
 * longer than its deadline, counted from its status' `startTime`, is failed with reason
 * `DeadlineExceeded` and its containers are stopped. Without a start time the deadline has
 * not started.
 * @module
 */
import type { Pod } from "../types.ts";

/** The status reason of a pod failed for its deadline. */
export const DEADLINE_EXCEEDED_REASON = "DeadlineExceeded";
/** The status message (and event message) upstream gives it. */
export const DEADLINE_EXCEEDED_MESSAGE =
  "Pod was active on the node longer than the specified deadline";

/**
 * Milliseconds until the pod's deadline from `nowMs` (0 or less: past it), or undefined when
 * the pod has no deadline or no start time.
 */
export function activeDeadlineRemainingMs(
  pod: Pod,
  startTime: string | undefined,
  nowMs: number,
): number | undefined {
  const seconds = pod.spec.activeDeadlineSeconds;
  if (seconds === undefined || seconds === null || !startTime) return undefined;
  const start = Date.parse(startTime);
  if (Number.isNaN(start)) return undefined;
  return start + seconds * 1000 - nowMs;
}

/** Whether the pod has been active for at least its deadline. */
export function pastActiveDeadline(
  pod: Pod,
  startTime: string | undefined,
  nowMs: number,
): boolean {
  const remaining = activeDeadlineRemainingMs(pod, startTime, nowMs);
  return remaining !== undefined && remaining <= 0;
}
