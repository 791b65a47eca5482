/**
 * The pure "decide" half of a pod sync (kubelet's `computePodActions`): given a pod spec and the
 * runtime's view of the pod, work out whether the sandbox must be (re)created, which containers
 * to kill (with reasons) and which to start. No I/O happens here.
 *
 * Init containers (and sidecars) are planned by `init_container_actions.ts`. Ephemeral
 * containers are started once each, in an existing sandbox, and never restarted.
 *
 * @module
 */

import {
  findContainerView,
  restartsOnFailure,
  specChanged,
} from "../containers/container_lookup.ts";
import { planInitContainers } from "./init_container_actions.ts";
import type {
  ComputePodActionsOptions,
  KillReason,
  PodActions,
} from "./pod_plan.ts";
import type {
  Container,
  Pod,
  PodRuntimeStatus,
  SandboxView,
} from "../types.ts";

export { findContainerView } from "../containers/container_lookup.ts";
export { isSidecar } from "../types.ts";

function wantsHostNetwork(pod: Pod): "node" | "pod" {
  return pod.spec.hostNetwork ? "node" : "pod";
}

/**
 * Decides whether the pod needs a new sandbox (kubelet's `PodSandboxChanged`).
 * Returns `[create, attempt, sandboxId]`.
 */
export function sandboxChanged(
  pod: Pod,
  status: PodRuntimeStatus,
): { create: boolean; attempt: number; sandboxId: string } {
  const newest: SandboxView | undefined = status.sandboxes[0];
  if (!newest) return { create: true, attempt: 0, sandboxId: "" };
  const readyCount = status.sandboxes.filter((s) => s.ready).length;
  const next = newest.attempt + 1;
  if (readyCount > 1 || !newest.ready) {
    return { create: true, attempt: next, sandboxId: newest.id };
  }
  if (
    newest.networkMode !== undefined &&
    newest.networkMode !== wantsHostNetwork(pod)
  ) {
    return { create: true, attempt: next, sandboxId: "" };
  }
  if (!pod.spec.hostNetwork && newest.ip === "") {
    return { create: true, attempt: next, sandboxId: newest.id };
  }
  return { create: false, attempt: newest.attempt, sandboxId: newest.id };
}

/**
 * Whether a container that is not running should be (re)started
 * (kubelet's `ShouldContainerBeRestarted`).
 */
export function shouldContainerBeRestarted(
  container: Container,
  pod: Pod,
  status: PodRuntimeStatus,
): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  const view = findContainerView(status, container.name);
  if (!view) return true;
  switch (view.state) {
    case "running":
      return false;
    case "unknown":
    case "created":
      return true;
  }
  const policy = pod.spec.restartPolicy ?? "Always";
  if (policy === "Never") return false;
  if (policy === "OnFailure" && view.exitCode === 0) return false;
  return true;
}

function emptyActions(
  sandbox: { create: boolean; attempt: number; sandboxId: string },
): PodActions {
  return {
    killPod: sandbox.create,
    createSandbox: sandbox.create,
    sandboxId: sandbox.sandboxId,
    attempt: sandbox.attempt,
    initContainersToStart: [],
    containersToStart: [],
    ephemeralContainersToStart: [],
    containersToKill: new Map(),
  };
}

function anyRegularContainerCreated(
  pod: Pod,
  status: PodRuntimeStatus,
): boolean {
  return pod.spec.containers.some((c) => {
    const view = findContainerView(status, c.name);
    return view !== undefined && view.state !== "unknown";
  });
}

/**
 * Computes what one sync of `pod` must do, given the runtime's view of it.
 *
 * @example
 * ```ts
 * import { computePodActions } from "./pod_actions.ts";
 * const pod = { metadata: { name: "web", namespace: "default", uid: "u1" },
 *   spec: { containers: [{ name: "app", image: "nginx" }] } };
 * const actions = computePodActions(pod, { uid: "u1", name: "web", namespace: "default",
 *   sandboxes: [], containers: [] });
 * console.assert(actions.createSandbox && actions.containersToStart[0] === 0);
 * ```
 */
export function computePodActions(
  pod: Pod,
  status: PodRuntimeStatus,
  options: ComputePodActionsOptions = {},
): PodActions {
  const sandbox = sandboxChanged(pod, status);
  const actions = emptyActions(sandbox);
  if (sandbox.create) return planNewSandbox(pod, status, actions);

  // upstream: ephemeral containers may start before initialization completes; an instance
  // that exists in any state (even exited) means the container already ran
  (pod.spec.ephemeralContainers ?? []).forEach((c, index) => {
    if (!findContainerView(status, c.name)) {
      actions.ephemeralContainersToStart.push(index);
    }
  });
  const initialized = planInitContainers(pod, status, actions, options);
  if (actions.killPod || !initialized) return actions;

  let keep = 0;
  pod.spec.containers.forEach((container, index) => {
    const view = findContainerView(status, container.name);
    if (!view || view.state !== "running") {
      if (!shouldContainerBeRestarted(container, pod, status)) return;
      actions.containersToStart.push(index);
      if (view?.state === "unknown") {
        actions.containersToKill.set(view.id, {
          containerId: view.id,
          name: container.name,
          container,
          message:
            `Container is in "unknown" state, try killing it before restart`,
          reason: "Unknown",
        });
      }
      return;
    }
    let restart = restartsOnFailure(pod);
    let message: string;
    let reason: KillReason = "";
    if (specChanged(container, view)) {
      message = `Container ${container.name} definition changed`;
      restart = true;
    } else if (options.livenessResults?.get(view.id) === "failure") {
      message = `Container ${container.name} failed liveness probe`;
      reason = "LivenessProbe";
    } else if (options.startupResults?.get(view.id) === "failure") {
      message = `Container ${container.name} failed startup probe`;
      reason = "StartupProbe";
    } else {
      keep++;
      return;
    }
    if (restart) {
      message = `${message}, will be restarted`;
      actions.containersToStart.push(index);
    }
    actions.containersToKill.set(view.id, {
      containerId: view.id,
      name: container.name,
      container,
      message,
      reason,
    });
  });

  if (keep === 0 && actions.containersToStart.length === 0) {
    actions.killPod = true;
    // sidecars alone must not keep a finished pod alive
    actions.initContainersToStart = [];
  }
  return actions;
}

function planNewSandbox(
  pod: Pod,
  status: PodRuntimeStatus,
  actions: PodActions,
): PodActions {
  if (
    !restartsOnFailure(pod) && actions.attempt !== 0 &&
    status.containers.length > 0
  ) {
    // a Never pod whose sandbox went away is done: only kill it
    actions.createSandbox = false;
    return actions;
  }
  const toStart: number[] = [];
  pod.spec.containers.forEach((c, index) => {
    const view = findContainerView(status, c.name);
    const succeeded = view?.state === "exited" && view.exitCode === 0;
    if (pod.spec.restartPolicy === "OnFailure" && succeeded) return;
    toStart.push(index);
  });
  if (toStart.length === 0 && anyRegularContainerCreated(pod, status)) {
    actions.createSandbox = false;
    return actions;
  }
  if ((pod.spec.initContainers ?? []).length > 0) {
    actions.initContainersToStart = [0];
    return actions;
  }
  actions.containersToStart = toStart;
  return actions;
}
