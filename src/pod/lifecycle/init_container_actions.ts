/**
 * The init-container half of a pod's actions (kubelet's `computeInitContainerActions`):
 * regular init containers run one at a time in spec order and a failure either retries them
 * or, under `restartPolicy: Never`, kills the pod; init containers with `restartPolicy:
 * Always` (sidecars) are started in order and kept running, restarted on a failed startup or
 * liveness probe or a changed spec.
 *
 * @module
 */

import type {
  Container,
  ContainerView,
  Pod,
  PodRuntimeStatus,
} from "../types.ts";
import { isSidecar } from "../types.ts";
import {
  findContainerView,
  restartsOnFailure,
  specChanged,
} from "../containers/container_lookup.ts";
import type {
  ComputePodActionsOptions,
  KillReason,
  PodActions,
} from "./pod_plan.ts";

function initContainerFailed(view: ContainerView): boolean {
  if (view.reason === "OOMKilled") return true;
  if (view.state === "exited" && view.exitCode !== 0) return true;
  return view.state === "unknown";
}

/**
 * Fills the init-container part of `actions`. Returns true when initialisation is complete and
 * the regular containers should be examined.
 */
export function planInitContainers(
  pod: Pod,
  status: PodRuntimeStatus,
  actions: PodActions,
  options: ComputePodActionsOptions,
): boolean {
  const inits = pod.spec.initContainers ?? [];
  if (inits.length === 0) return true;

  // A created or running regular container proves initialisation happened before.
  let initialized = pod.spec.containers.some((c) => {
    const state = findContainerView(status, c.name)?.state;
    return state === "created" || state === "running";
  });
  let seenProgress = initialized;
  const onFailure = restartsOnFailure(pod);
  const toStart: number[] = [];
  const kill = (
    view: ContainerView,
    container: Container,
    message: string,
    reason: KillReason,
  ) =>
    actions.containersToKill.set(view.id, {
      containerId: view.id,
      name: container.name,
      container,
      message,
      reason,
    });

  // Walk backwards: finished init containers may have been garbage collected, so the newest
  // evidence of progress is what counts.
  for (let i = inits.length - 1; i >= 0; i--) {
    const container = inits[i]!;
    const sidecar = isSidecar(container);
    const view = findContainerView(status, container.name);
    if (!view) {
      if (seenProgress && sidecar) toStart.push(i);
      continue;
    }
    if (seenProgress && !sidecar) continue;

    const last = i === inits.length - 1;
    if (view.state === "created") {
      // created but never started: the runtime failed to start it, try again
      toStart.push(i);
    } else if (view.state === "running") {
      if (sidecar) {
        const startup = options.startupResults?.get(view.id);
        if (container.startupProbe && startup !== "success") {
          if (startup === "failure") {
            kill(
              view,
              container,
              `Init container ${container.name} failed startup probe`,
              "StartupProbe",
            );
            toStart.push(i);
          }
        } else {
          if (last) initialized = true;
          else if (!seenProgress) toStart.push(i + 1);
          if (specChanged(container, view)) {
            kill(
              view,
              container,
              `Init container ${container.name} definition changed`,
              "",
            );
            toStart.push(i);
          } else if (options.livenessResults?.get(view.id) === "failure") {
            kill(
              view,
              container,
              `Init container ${container.name} failed liveness probe`,
              "LivenessProbe",
            );
            toStart.push(i);
          }
        }
      }
      // a running regular init container: wait for it to finish
    } else if (view.state === "exited") {
      if (sidecar) {
        toStart.push(i);
      } else if (initContainerFailed(view)) {
        if (!onFailure) {
          actions.killPod = true;
          actions.initContainersToStart = [];
          return false;
        }
        toStart.push(i);
      } else if (last) {
        initialized = true;
      } else {
        toStart.push(i + 1);
      }
    } else {
      // unknown state: kill before restarting so two instances never run
      if (!sidecar && !onFailure) {
        actions.killPod = true;
        actions.initContainersToStart = [];
        return false;
      }
      kill(
        view,
        container,
        `Init container is in "unknown" state, try killing it before restart`,
        "Unknown",
      );
      toStart.push(i);
    }
    seenProgress = true;
  }
  if (!seenProgress) toStart.push(0);
  actions.initContainersToStart = toStart.reverse();
  return initialized;
}
