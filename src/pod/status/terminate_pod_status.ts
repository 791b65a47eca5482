/**
 * Final status of a terminated pod (kubelet's `statusManager.TerminatePod`).
 *
 * @module
 */

import type { ContainerStatus, PodStatus } from "../types.ts";

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

function attempted(s: ContainerStatus): boolean {
  return s.state.waiting === undefined || s.lastState.terminated !== undefined;
}

/**
 * Whether the pod ever got past its init containers (upstream `hasPodInitialized` in the status
 * manager): no init containers; or a regular container left the waiting state or has a last
 * termination; or the last init container exited 0 (now or before).
 */
export function hasPodInitialized(
  status: PodStatus,
  options: { initContainers: number },
): boolean {
  if (options.initContainers === 0) return true;
  if ((status.containerStatuses ?? []).some(attempted)) return true;
  const inits = status.initContainerStatuses ?? [];
  const last = inits[inits.length - 1];
  return last?.lastState.terminated?.exitCode === 0 ||
    last?.state.terminated?.exitCode === 0;
}

/** Options of {@linkcode terminatePodStatus}. */
export interface TerminateOptions {
  /** Static pods keep their phase (upstream leaves them to the next sync). */
  isStatic?: boolean;
  /**
   * Number of init containers in the spec (default 0). With init containers, regular
   * containers of a pod that never initialized keep their waiting state.
   */
  initContainers?: number;
}

/**
 * Returns the final status (upstream `TerminatePod`): once the pod initialized, every regular
 * container without a terminated state gets `ContainerStatusUnknown` (exit 137); so do the init
 * containers up to the last one that was attempted (the trailing never-started ones keep
 * waiting, the first is always included); a non-static pod still Pending/Running becomes Failed.
 */
export function terminatePodStatus(
  status: PodStatus,
  options: TerminateOptions = {},
): PodStatus {
  const out: PodStatus = structuredClone(status);
  const initialized = hasPodInitialized(out, {
    initContainers: options.initContainers ?? 0,
  });
  out.containerStatuses = out.containerStatuses ?? [];
  if (initialized) out.containerStatuses = out.containerStatuses.map(finish);
  if (out.initContainerStatuses) {
    const inits = out.initContainerStatuses;
    let upTo = 0;
    for (let i = inits.length - 1; i >= 0; i--) {
      if (attempted(inits[i]!)) {
        upTo = i;
        break;
      }
    }
    out.initContainerStatuses = inits.map((s, i) => i <= upTo ? finish(s) : s);
  }
  const phase = out.phase ?? "Pending";
  if (!options.isStatic && (phase === "Pending" || phase === "Running")) {
    out.phase = "Failed";
  }
  return out;
}
