/**
 * Small questions about a pod's containers that the action planners
 * (`pod_actions.ts`, `init_container_actions.ts`) share.
 *
 * @module
 */

import { containerHashString } from "./container_hash.ts";
import type {
  Container,
  ContainerView,
  Pod,
  PodRuntimeStatus,
} from "../types.ts";

/** The newest container instance named `name` (statuses are sorted newest first). */
export function findContainerView(
  status: PodRuntimeStatus,
  name: string,
): ContainerView | undefined {
  return status.containers.find((c) => c.name === name);
}

/** True unless the pod's restartPolicy is Never. */
export function restartsOnFailure(pod: Pod): boolean {
  return (pod.spec.restartPolicy ?? "Always") !== "Never";
}

/** True when the running instance was created from another version of the spec. */
export function specChanged(
  container: Container,
  view: ContainerView,
): boolean {
  return view.hash !== containerHashString(container);
}
