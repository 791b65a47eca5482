/**
 * Admission under node pressure (upstream eviction `managerImpl.Admit`): with no pressure every
 * pod is admitted; critical pods always are; under memory pressure alone only BestEffort pods
 * are refused (unless they tolerate the memory-pressure taint); any other pressure refuses
 * every pod.
 * @module
 */
import type { Pod, PodAdmission } from "../pod/mod.ts";
import {
  isMirrorPod,
  isStaticPod,
  podQOSClass,
  toleratesTaint,
} from "../pod/mod.ts";
import type { PressureCondition } from "./thresholds.ts";

/** The reason of an eviction or a refusal under pressure (upstream `eviction.Reason`). */
export const EVICTED_REASON = "Evicted";

/** Upstream `SystemCriticalPriority`: priorities at or above it are critical. */
const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** Upstream `IsCriticalPod`: static, mirror, or of system-critical priority. */
export function isCriticalPod(pod: Pod): boolean {
  return isStaticPod(pod) || isMirrorPod(pod) ||
    (pod.spec.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
}

/** Go's `%v` of a condition list: `[MemoryPressure DiskPressure]`. */
export function conditionList(
  conditions: readonly PressureCondition[],
): string {
  return `[${conditions.join(" ")}]`;
}

/** Refusal of `pod` under `conditions`, or undefined to admit it. */
export function pressureRefusal(
  pod: Pod,
  conditions: readonly PressureCondition[],
): { reason: string; message: string } | undefined {
  if (conditions.length === 0 || isCriticalPod(pod)) return undefined;
  if (conditions.length === 1 && conditions[0] === "MemoryPressure") {
    if (podQOSClass(pod) !== "BestEffort") return undefined;
    const taint = {
      key: "node.kubernetes.io/memory-pressure",
      effect: "NoSchedule" as const,
    };
    if (toleratesTaint(pod, taint)) return undefined;
  }
  return {
    reason: EVICTED_REASON,
    message: `The node had condition: ${conditionList(conditions)}. `,
  };
}

/** `base` behind the pressure check, as upstream runs the eviction admit handler first. */
export function withPressureAdmission(
  base: PodAdmission,
  conditions: () => readonly PressureCondition[],
): PodAdmission {
  return {
    admit(pod) {
      const refusal = pressureRefusal(pod, conditions());
      return refusal ? { admit: false, ...refusal } : base.admit(pod);
    },
    reject: (pod, refusal) => base.reject(pod, refusal),
  };
}
