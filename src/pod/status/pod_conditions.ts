/**
 * Condition bookkeeping: keep `lastTransitionTime` while a condition's status is unchanged.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { PodCondition } from "../types.ts";

/** RFC 3339 timestamp with second precision, as the API server stores them. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Stamps each condition with a `lastTransitionTime`: the previous one when the same condition
 * type had the same status before, otherwise now.
 */
export function mergeConditions(
  next: readonly PodCondition[],
  previous: readonly PodCondition[] | undefined,
  clock: Clock,
): PodCondition[] {
  const now = rfc3339(clock.now());
  return next.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    const lastTransitionTime =
      old && old.status === c.status && old.lastTransitionTime
        ? old.lastTransitionTime
        : c.lastTransitionTime ?? now;
    return { ...c, lastProbeTime: null, lastTransitionTime };
  });
}
