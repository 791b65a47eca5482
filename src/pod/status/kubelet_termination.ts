/**
 * The status of a pod the kubelet itself stops (eviction, node shutdown): phase Failed, the
 * reason and message, and a `DisruptionTarget` condition with reason `TerminationByKubelet`
 * (upstream's status functions given to `killPodNow`), until the containers have stopped:
 * then their outcome decides the phase, as upstream's status merge does.
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
  /**
   * The phase the status got when the kill began (the caller records it from the first
   * status it makes); omitted → decided from `status` now.
   */
  phaseAtKill?: "Succeeded" | "Failed";
}

/** The phase upstream's status function gives the pod when the kill begins. */
export function phaseAtKill(
  status: PodStatus,
  termination: KubeletTermination,
): "Succeeded" | "Failed" {
  return termination.phaseAtKill ??
    (termination.keepSucceeded && status.phase === "Succeeded"
      ? "Succeeded"
      : "Failed");
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
  // upstream's three-way merge: once the containers have stopped their outcome is the
  // phase; the reason and message stay only while that is the phase the kill gave
  const atKill = phaseAtKill(status, termination);
  const phase = status.phase === "Succeeded" || status.phase === "Failed"
    ? status.phase
    : atKill;
  return {
    ...status,
    phase,
    ...(phase === atKill
      ? { reason: termination.reason, message: termination.message }
      : {}),
    conditions: [
      ...(status.conditions ?? []).filter((c) => c.type !== DISRUPTION_TARGET),
      condition,
    ],
  };
}
