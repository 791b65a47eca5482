/**
 * The API server: connection (kubeconfig, TLS bootstrap), the REST client and the narrow
 * consumer interfaces over it. The only area that imports `@kubernetes/client-node`, and only
 * its kubeconfig entry parser (`dist/config_types.js`): the package index loads every
 * generated API and model (measured ~0.35-0.5 s and +90 MB RSS under Deno 2.9.6), while the
 * few calls the kubelet makes go through Deno's own `fetch`.
 *
 * Must not know about pods, the runtime or status computation: callers own those.
 * @module
 */

/** The core/v1 pod model: plain JSON shapes of Pod, PodSpec, PodStatus and their parts. */
export type * from "./core_v1.ts";
export type {
  ApiCallOptions,
  CertificateSigningRequest,
  CsrApi,
  Lease,
  LeaseApi,
  LeaseSpec,
  Node,
  NodeAddress,
  NodeApi,
  NodeCondition,
  NodeStatus,
  NodeSystemInfo,
  Taint,
} from "./types.ts";
/** Error classes by meaning (404, 409 Conflict, 409 AlreadyExists, any other status). */
export {
  ApiAlreadyExistsError,
  ApiConflictError,
  ApiNotFoundError,
  ApiStatusError,
} from "./errors.ts";
/** Reads a kubeconfig's current context into a connection. */
export { loadKubeconfig, parseKubeconfig } from "./kubeconfig.ts";
export type { Connection } from "./kubeconfig.ts";
/** TLS bootstrap of the client certificate. */
export {
  bootstrapClientCertificate,
  certificateValidAt,
  CLIENT_PAIR_CURRENT,
  CLIENT_PROFILE,
  currentPairName,
  readFileIfExists,
  SERVING_PROFILE,
} from "./bootstrap.ts";
export type {
  BootstrapDeps,
  BootstrapOptions,
  CertificateProfile,
} from "./bootstrap.ts";
/** Certificate rotation with the node's own identity (client and serving certificates). */
export {
  certificateLifetime,
  CertificateRotator,
  ClientCertificateRotator,
  rotationDeadline,
} from "./cert_rotation.ts";
export type {
  CertificateLifetime,
  RotatorDeps,
  RotatorOptions,
} from "./cert_rotation.ts";
export { requestNodeCertificate } from "./bootstrap.ts";
export type { SubjectAltNames } from "./csr.ts";
export type { RequestCertificateOptions } from "./bootstrap.ts";
/** Connects (bootstrapping first when configured) and opens the API client. */
export { connectApiServer, openApiClient } from "./connect.ts";
export type { ApiConnection, ConnectOptions } from "./connect.ts";
/** The API client over the REST client. */
export { KubeApiClient, STRATEGIC_MERGE_PATCH } from "./kube_api_client.ts";
/** Pod list/watch, status patch and delete (`PodApi`). */
export { RestPodApi } from "./pod_api.ts";
export type {
  PodApi,
  PodDeleteOptions,
  PodList,
  PodListOptions,
  PodWatchEvent,
  PodWatchOptions,
} from "./pod_api.ts";
/** ConfigMaps, Secrets (GET, per-object LIST/WATCH) and TokenRequest (`ObjectApi`). */
export { ObjectClient } from "./object_client.ts";
export type {
  ConfigMap,
  NamedObject,
  ObjectApi,
  ObjectKind,
  ObjectWatchEvent,
  Secret,
  TokenRequest,
} from "./object_client.ts";
/** core/v1 Events: create and count patches (`RestEventApi`). */
export { RestEventApi } from "./event_api.ts";
export type { Event, EventType, ObjectReference } from "./event_api.ts";
export { createRestClient } from "./rest_client.ts";
export type { RestClient, RestClientOptions } from "./rest_client.ts";
/** The client-side rate limit (`kubeAPIQPS`/`kubeAPIBurst`). */
export { TokenBucket } from "./token_bucket.ts";
/** RuntimeClasses by name, for the pods' runtime handlers (`RuntimeClassApi`). */
export { RuntimeClassClient } from "./runtime_class_api.ts";
export type { RuntimeClass, RuntimeClassApi } from "./runtime_class_api.ts";
/** PVCs, PVs, CSIDrivers, VolumeAttachments and the node's CSINode (`StorageApi`). */
export { StorageClient } from "./storage_api.ts";
export type {
  CsiDriver,
  CsiNode,
  CsiNodeDriver,
  CsiPersistentVolumeSource,
  PersistentVolume,
  PersistentVolumeClaim,
  StorageApi,
  VolumeAttachment,
} from "./storage_api.ts";
/** Services of every namespace, for service environment variables (`ServiceApi`). */
export { ServiceClient } from "./service_api.ts";
export type { Service, ServiceApi, ServicePort } from "./service_api.ts";
/** One LIST's items and version, one WATCH event. */
export type { ListResult, WatchEvent } from "./list_watch.ts";
/** The kubelet's own Node by list and watch (`NodeWatchApi`). */
export { NodeWatchClient } from "./node_watch_api.ts";
export type { NodeWatchApi } from "./node_watch_api.ts";
/** The list-then-watch loop (client-go's reflector). */
export { runReflector } from "./reflector.ts";
export type {
  ListWatch,
  ReflectorDeps,
  ReflectorOptions,
} from "./reflector.ts";
