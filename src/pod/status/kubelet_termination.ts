/**
 * The status of a pod the kubelet itself stops (eviction, node shutdown): phase Failed, the
 * reason and message, and a `DisruptionTarget` condition with reason `TerminationByKubelet`
 * (upstream's status functions given to `killPodNow`).
 *
 * @module
 */
import type { PodCondition, PodStatus } from "../types.ts";

const DISRUPTION_TARGET = "DisruptionTarget";
const TERMINATION_BY_KUBELET = "TerminationByKubelet";

/** Why the kubelet stopped a pod, as its status tells it. */
export interface KubeletTermination {
  reason: string;
  message: string;
  /**
   * A pod that already succeeded stays Succeeded (node shutdown); otherwise the phase is
   * Failed whatever it was (eviction).
   */
  keepSucceeded?: boolean;
}

/**
 * `status` with the termination applied; the condition's transition time is kept from
 * `previous` while it was already true.
 */
export function terminatedByKubeletStatus(
  status: PodStatus,
  termination: KubeletTermination,
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
    message: termination.message,
    lastTransitionTime: before?.status === "True" && before.lastTransitionTime
      ? before.lastTransitionTime
      : now,
  };
  return {
    ...status,
    phase: termination.keepSucceeded && status.phase === "Succeeded"
      ? "Succeeded"
      : "Failed",
    reason: termination.reason,
    message: termination.message,
    conditions: [
      ...(status.conditions ?? []).filter((c) => c.type !== DISRUPTION_TARGET),
      condition,
    ],
  };
}
