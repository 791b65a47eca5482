/**
 * In-place resize that this kubelet does not apply: a running container whose spec asks for
 * cpu or memory other than what its status reports it runs with. Upstream's allocation manager
 * then marks the pod with `PodResizePending`, reason `Infeasible`, the message its
 * unsupported-platform check gives.
 *
 * @module
 */

import type {
  Container,
  ContainerStatus,
  PodCondition,
} from "../../api/mod.ts";
import { milliValue, quantityValue } from "../../util/quantity.ts";

/** The condition a pod with a resize it cannot apply carries. */
export const RESIZE_INFEASIBLE_CONDITION: Readonly<PodCondition> = {
  type: "PodResizePending",
  status: "True",
  reason: "Infeasible",
  message: "In-place pod resize is not supported on this node",
};

const RESIZABLE = [
  ["requests", "cpu", milliValue],
  ["limits", "cpu", milliValue],
  ["requests", "memory", quantityValue],
  ["limits", "memory", quantityValue],
] as const;

/** Whether any running container's spec cpu/memory differs from what its status reports. */
export function resizeNotApplied(
  containers: readonly Container[],
  statuses: readonly ContainerStatus[],
): boolean {
  return containers.some((c) => {
    const s = statuses.find((x) => x.name === c.name);
    if (!s?.state.running || !s.resources) return false;
    return RESIZABLE.some(([kind, name, value]) => {
      const want = c.resources?.[kind]?.[name];
      const have = s.resources?.[kind]?.[name];
      if (want === undefined || have === undefined) return want !== have;
      return value(want) !== value(have);
    });
  });
}
