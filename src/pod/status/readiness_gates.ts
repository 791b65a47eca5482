/**
 * Pod readiness gates (upstream `GeneratePodReadyCondition` and `NeedToReconcilePodReadiness`):
 * the Ready condition is ContainersReady's while that is not True; then it is True only when
 * every `spec.readinessGates` condition type is in the pod's conditions with status True
 * (conditions other components write through the API), else False with reason
 * `ReadinessGatesNotReady` and one message part per unmet gate.
 * @module
 */
import type { Pod, PodCondition } from "../types.ts";

/** A condition's status, reason and message (what Ready copies). */
export type ConditionState = Omit<PodCondition, "type">;

/** Ready from ContainersReady and the pod's readiness gates over `conditions`. */
export function podReadyCondition(
  pod: Pod,
  containersReady: ConditionState,
  conditions: readonly PodCondition[],
): ConditionState {
  if (containersReady.status !== "True") {
    return {
      status: containersReady.status,
      ...(containersReady.reason ? { reason: containersReady.reason } : {}),
      ...(containersReady.message ? { message: containersReady.message } : {}),
    };
  }
  const unmet: string[] = [];
  for (const gate of pod.spec.readinessGates ?? []) {
    const found = conditions.find((c) => c.type === gate.conditionType);
    if (!found) {
      unmet.push(
        `corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`,
      );
    } else if (found.status !== "True") {
      unmet.push(
        `the status of pod readiness gate "${gate.conditionType}" is not "True", but ${found.status}`,
      );
    }
  }
  if (unmet.length === 0) return { status: "True" };
  return {
    status: "False",
    reason: "ReadinessGatesNotReady",
    message: unmet.join(", "),
  };
}

/**
 * Whether the pod's Ready condition, as its API status reports it, disagrees with its gates
 * there (another component changed a gate condition): the pod then needs a sync.
 */
export function needsReadinessReconcile(pod: Pod): boolean {
  if ((pod.spec.readinessGates ?? []).length === 0) return false;
  const conditions = pod.status?.conditions ?? [];
  const current = conditions.find((c) => c.type === "Ready");
  if (!current) return false;
  const containersReady = conditions.find((c) => c.type === "ContainersReady");
  const want = podReadyCondition(
    pod,
    containersReady ?? { status: "False" },
    conditions,
  );
  return current.status !== want.status ||
    (current.message ?? "") !== (want.message ?? "");
}
