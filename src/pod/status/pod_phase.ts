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
  let pendingInit = 0;
  let failedInit = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;

  for (const c of pod.spec.initContainers ?? []) {
    const s = find(statuses.init, c.name);
    if (isSidecar(c)) {
      if (!s) {
        unknown++;
      } else if (s.state.running) {
        if (!s.started) pendingInit++;
        running++;
      } else if (s.state.waiting) {
        if (!s.lastState.terminated) pendingInit++;
        waiting++;
      } else if (!s.state.terminated) {
        pendingInit++;
        unknown++;
      }
      continue;
    }
    if (!s || s.state.running) {
      pendingInit++;
    } else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state.waiting && s.lastState.terminated) {
      if (s.lastState.terminated.exitCode !== 0) failedInit++;
    } else {
      pendingInit++;
    }
  }

  let regularStarted = false;
  for (const c of pod.spec.containers) {
    const s = find(statuses.regular, c.name);
    if (!s) {
      unknown++;
    } else if (s.state.running) {
      running++;
      regularStarted = true;
    } else if (s.state.terminated) {
      stopped++;
      regularStarted = true;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting && s.lastState.terminated) {
      stopped++;
      regularStarted = true;
    } else if (s.state.waiting) {
      waiting++;
    } else {
      unknown++;
    }
  }

  if (failedInit > 0 && policy === "Never") return "Failed";
  if ((pendingInit > 0 && !regularStarted) || waiting > 0) return "Pending";
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
