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
  podUpdateRegistrar,
} from "./object_manager.ts";
export {
  containerReferences,
  type PodReferences,
  podReferences,
} from "./pod_references.ts";
export {
  createTokenManager,
  requiresRefresh,
  type TokenManager,
  type TokenSource,
} from "./token_manager.ts";
export {
  aggregateMessage,
  base64Bytes,
  collectVolumePayload,
  DEFAULT_MODE,
  DEFAULT_TOKEN_EXPIRATION_SECONDS,
  type KeyToPath,
  type ObjectLookup,
  type ObjectProjection,
  objectSourcePayload,
  type ObjectVolumeSource,
  type Payload,
  type ProjectedFile,
  projectedPayload,
  type ProjectionInputs,
  type VolumeProjection,
} from "./projection.ts";
export {
  createServiceCache,
  type ServiceCache,
  type ServiceCacheDeps,
} from "./service_cache.ts";
