/**
 * Pod phase from container statuses (kubelet's `getPhase`, pkg/kubelet/kubelet_pods.go).
 *
 * @module
 */

import type { ContainerStatus, Pod, PodPhase } from "../types.ts";
import { isSidecar } from "../types.ts";

function find(
  statuses: readonly ContainerStatus[],
  name: string,
): ContainerStatus | undefined {
  return statuses.find((s) => s.name === name);
}

/** Options of {@linkcode computePodPhase}. */
export interface PodPhaseOptions {
  /** The pod is being terminated: stopped containers will not restart. */
  podIsTerminal?: boolean;
  /** Static pods never get a terminal phase from `podIsTerminal` alone (upstream TODO). */
  isStatic?: boolean;
  /**
   * A regular container exists in the pod's current sandbox (upstream's
   * `HasAnyActiveRegularContainerStarted`): a sidecar still starting then keeps the pod out of
   * Pending, while a new sandbox after a node restart starts over from Pending.
   */
  podHasInitialized?: boolean;
}

/** Computes the pod phase from the init and regular container statuses. */
export function computePodPhase(
  pod: Pod,
  statuses: {
    init: readonly ContainerStatus[];
    regular: readonly ContainerStatus[];
  },
  options: PodPhaseOptions = {},
): PodPhase {
  const policy = pod.spec.restartPolicy ?? "Always";
  let pendingRegularInit = 0;
  let pendingSidecars = 0;
  let failedInit = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;

  for (const c of pod.spec.initContainers ?? []) {
    const s = find(statuses.init, c.name);
    if (isSidecar(c)) {
      // a sidecar that ran and stopped does not count towards the phase
      if (!s) {
        unknown++;
      } else if (s.state.running) {
        if (!s.started) pendingSidecars++;
        running++;
      } else if (s.state.waiting) {
        if (!s.lastState.terminated) {
          pendingSidecars++;
          waiting++;
        }
      } else if (!s.state.terminated) {
        pendingSidecars++;
        unknown++;
      }
      continue;
    }
    if (!s || s.state.running) {
      pendingRegularInit++;
    } else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state.waiting && s.lastState.terminated) {
      if (s.lastState.terminated.exitCode !== 0) failedInit++;
    } else {
      pendingRegularInit++;
    }
  }

  for (const c of pod.spec.containers) {
    const s = find(statuses.regular, c.name);
    if (!s) {
      unknown++;
    } else if (s.state.running) {
      running++;
    } else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting && s.lastState.terminated) {
      stopped++;
    } else if (s.state.waiting) {
      waiting++;
    } else {
      unknown++;
    }
  }

  if (failedInit > 0 && policy === "Never") return "Failed";
  if (
    pendingRegularInit > 0 ||
    (pendingSidecars > 0 && !options.podHasInitialized) ||
    waiting > 0
  ) {
    return "Pending";
  }
  if (running > 0 && unknown === 0) return "Running";
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (options.podIsTerminal && !options.isStatic) {
      return stopped === succeeded ? "Succeeded" : "Failed";
    }
    if (policy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (policy === "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}
