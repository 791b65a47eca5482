/**
 * The ConfigMaps, Secrets and service account tokens of this node's pods: which objects a pod
 * references, the per-object manager (`configMapAndSecretChangeDetectionStrategy`), the token
 * manager and the projected-volume payloads built from them.
 * @module
 */
export {
  type ChangeDetectionStrategy,
  createPodObjectManager,
  type ObjectGetter,
  objectNotFound,
  type PodObjectManager,
  type PodObjectManagerOptions,
} from "./object_manager.ts";
export {
  containerReferences,
  type PodReferences,
  podReferences,
} from "./pod_references.ts";
