/**
 * Final status of a terminated pod (kubelet's `statusManager.TerminatePod`).
 *
 * @module
 */

import type { ContainerStatus, PodStatus } from "../pod/types.ts";

function finish(s: ContainerStatus): ContainerStatus {
  if (s.state.terminated) return s;
  return {
    ...s,
    ready: false,
    started: false,
    state: {
      terminated: {
        exitCode: 137,
        reason: "ContainerStatusUnknown",
        message:
          "The container could not be located when the pod was terminated",
      },
    },
  };
}

/**
 * Returns the final status: every container without a terminated state gets
 * `ContainerStatusUnknown` (exit 137), and a non-static pod still Pending/Running becomes Failed.
 */
export function terminatePodStatus(
  status: PodStatus,
  options: { isStatic?: boolean } = {},
): PodStatus {
  const out: PodStatus = structuredClone(status);
  out.containerStatuses = (out.containerStatuses ?? []).map(finish);
  if (out.initContainerStatuses) {
    out.initContainerStatuses = out.initContainerStatuses.map(finish);
  }
  const phase = out.phase ?? "Pending";
  if (!options.isStatic && (phase === "Pending" || phase === "Running")) {
    out.phase = "Failed";
  }
  return out;
}
