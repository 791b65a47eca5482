/**
 * `registerWithTaints` checks: upstream `taints.CheckTaintValidation` per
 * taint, and `timeAdded` must be unset.
 * @module
 */
import { isQualifiedName, isValidLabelValue } from "./validation_support.ts";

/** A taint as it appears in the v1beta1 document. */
export interface TaintLike {
  key: string;
  value?: string | undefined;
  effect: string;
  timeAdded?: string | null | undefined;
}

const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/** Go `%v` of a core/v1 Taint value. */
function showTaint(t: TaintLike): string {
  return `{${t.key} ${t.value ?? ""} ${t.effect} ${t.timeAdded ?? "<nil>"}}`;
}

/** Messages for every invalid taint, in order. */
export function taintProblems(taints: readonly TaintLike[]): string[] {
  const out: string[] = [];
  for (const taint of taints) {
    const badKey = !isQualifiedName(taint.key);
    const badValue = !isValidLabelValue(taint.value ?? "");
    const badEffect = taint.effect !== "" && !EFFECTS.includes(taint.effect);
    if (badKey || badValue || badEffect) {
      out.push(`invalid taint: ${showTaint(taint)}`);
    }
    if (taint.timeAdded !== undefined && taint.timeAdded !== null) {
      out.push("invalid configuration: taint.TimeAdded is not nil");
    }
  }
  return out;
}
