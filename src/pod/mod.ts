/**
 * Pod lifecycle: pod types, the pure `computePodActions` decision, the `PodSyncer` that executes
 * it against the CRI runtime, back-off, image pulling and orphan garbage collection (executing
 * pod work); pod sources, pod workers, PLEG and the sync loop (deciding when to do it).
 *
 * This folder must not import `@kubernetes/client-node` and must not read global time (use the
 * injected `Clock`).
 *
 * @module
 */

export type {
  Container,
  ContainerPort,
  ContainerState,
  ContainerStateRunning,
  ContainerStateTerminated,
  ContainerStateWaiting,
  ContainerStatus,
  EnvVar,
  ObjectMeta,
  Pod,
  PodCondition,
  PodIP,
  PodPhase,
  PodRuntimeStatus,
  PodSpec,
  PodStatus,
  PodSyncer,
  PodSyncOutcome,
  PodUpdateType,
  PodWork,
  Probe,
  PullPolicy,
  RestartPolicy,
  SyncResult,
} from "./types.ts";
export { isSidecar, podFullName } from "./types.ts";

// Executing pod work: decisions, CRI config, back-off, images, the syncer and orphan GC.
/** Pure sync plan: `computePodActions(pod, runtimeStatus, options?)`. */
export {
  computePodActions,
  shouldContainerBeRestarted,
} from "./lifecycle/pod_actions.ts";
export type {
  ComputePodActionsOptions,
  PodActions,
} from "./lifecycle/pod_plan.ts";
export type { ProbeResult } from "./probes/probe_results.ts";
/** CRI-backed PodSyncer: `createPodSyncer(deps, options)`. */
export { createPodSyncer } from "./lifecycle/pod_syncer.ts";
export type {
  PodSyncerDeps,
  PodSyncerOptions,
  RuntimePodSyncer,
} from "./lifecycle/pod_syncer.ts";
/** Why the kubelet stops a pod, as its status tells it (eviction, node shutdown). */
export type { KubeletTermination } from "./status/kubelet_termination.ts";
/** Reads one pod's sandboxes/containers from the runtime. */
export { getPodRuntimeStatus } from "./status/runtime_pod_status.ts";
export { RuntimeStatusCache } from "./status/runtime_status_cache.ts";
export {
  CONTAINER_GC_PERIOD_MS,
  createContainerGc,
  DEFAULT_CONTAINER_GC_POLICY,
  planContainerGc,
  planSandboxGc,
  podUidFromLogDirectory,
} from "./gc/container_gc.ts";
export type {
  ContainerGc,
  ContainerGcDeps,
  ContainerGcOptions,
  ContainerGcPolicy,
  ContainerGcResult,
  GcFileSystem,
  PodStateProvider,
} from "./gc/container_gc.ts";
/** Image GC (upstream `image_gc_manager.go`): the executor and its loop. */
export { createImageGc, imageGcEnabled, runImageGc } from "./gc/image_gc.ts";
export type {
  ImageGc,
  ImageGcDeps,
  ImageGcOptions,
  NodeWarning,
} from "./gc/image_gc.ts";
export { IMAGE_GC_PERIOD_MS } from "./gc/image_gc_plan.ts";
export type { ImageFsStats, ImageGcPolicy } from "./gc/image_gc_plan.ts";
export {
  listRunningPods,
  runningPodStandIn,
} from "./lifecycle/runtime_pods.ts";
export type {
  ListRunningPodsOptions,
  RunningPod,
} from "./lifecycle/runtime_pods.ts";
export {
  containerHashString,
  fnv32a,
  hashContainer,
} from "./containers/container_hash.ts";
export {
  ContainerConfigError,
  generateContainerConfig,
  generatePodSandboxConfig,
  podLogDirectory,
} from "./containers/container_config.ts";
export {
  CONTAINER_NAME_LABEL,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_UID_LABEL,
} from "./runtime_labels.ts";
export { parseResolvConf } from "./containers/dns_config.ts";
export type { DnsOptions } from "./containers/dns_config.ts";
export {
  readNodeResources,
  readPodEnvironmentOptions,
} from "./containers/pod_environment.ts";
export type { HostFiles } from "./containers/host_files.ts";
export type {
  PodEnvironmentConfig,
  PodEnvironmentOptions,
} from "./containers/pod_environment.ts";
export { podQOSClass, podRequests } from "./cgroups/pod_resources.ts";
export type { NodeResources, QOSClass } from "./cgroups/pod_resources.ts";
export {
  createBackoff,
  createContainerBackoff,
  createImageBackoff,
} from "./containers/backoff.ts";
export type { Backoff, BackoffOptions } from "./containers/backoff.ts";
export { createImagePuller, defaultPullPolicy } from "./images/image_puller.ts";
export { createNodeLogins } from "./images/node_logins.ts";
export {
  CredentialProviderConfigError,
  readCredentialProviderConfig,
} from "./images/credential_provider_config.ts";
export { credentialPluginPath } from "./images/credential_plugin_exec.ts";
export type {
  EnsureImageResult,
  ImagePuller,
  ImagePullerOptions,
  NodeLoginSource,
} from "./images/image_puller.ts";

// Driving it: static pods, sources, pod config, pod workers, PLEG and the sync loop.
export {
  applyStaticPodDefaults,
  CONFIG_HASH_ANNOTATION,
  CONFIG_MIRROR_ANNOTATION,
  CONFIG_SEEN_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
  ManifestError,
  readStaticPods,
} from "./static/static_pod.ts";
export {
  createApiSource,
  createFileSource,
  createHttpSource,
} from "./sources/mod.ts";
export type { PodSource } from "./sources/mod.ts";
export { PodConfig } from "./sources/pod_config.ts";
export type { PodOperation, PodUpdate } from "./sources/pod_config.ts";
export { PodWorkers } from "./lifecycle/pod_workers.ts";
export type { WorkerPhase } from "./lifecycle/pod_workers.ts";
export { computePlegEvents, Pleg } from "./lifecycle/pleg.ts";
export type {
  PodLifecycleEvent,
  PodLifecycleEventType,
} from "./lifecycle/pleg.ts";
export {
  dispatch,
  LoopEventQueue,
  PodSyncHandler,
  runSyncLoop,
} from "./lifecycle/sync_loop.ts";
export type {
  LoopEvent,
  PodAdmission,
  SyncHandler,
} from "./lifecycle/sync_loop.ts";
/** `/var/log/containers` links and log rotation (`containerLogMax*`). */
export { createContainerLogs } from "./logs/container_logs.ts";
export type { ContainerLogs } from "./logs/container_logs.ts";
/** Pod admission for sysctls: safe ones plus `allowedUnsafeSysctls` (`SysctlForbidden`). */
export {
  createSysctlAllowlist,
  SYSCTL_FORBIDDEN_REASON,
  sysctlAdmission,
  SysctlAllowlist,
} from "./admission/sysctl_admission.ts";
/** When the sync loop last iterated (read by the `syncloop` health check). */
export { SyncLoopMonitor } from "./lifecycle/sync_loop_monitor.ts";
export type {
  SyncLoopActivity,
  SyncLoopRecorder,
} from "./lifecycle/sync_loop_monitor.ts";

// Probes: one worker per (pod, container, probe type) filling the shared result maps.
/** Probe manager fed by the pod status cache: `createProber(deps, options)`. */
export { createProber } from "./probes/prober.ts";
export type { Prober, ProberDeps, ProberOptions } from "./probes/prober.ts";
/** Result maps shared by the prober and the pod syncer. */
export { createProbeResults } from "./probes/probe_results.ts";
export type {
  ProbeResultChange,
  ProbeResults,
  ProbeType,
} from "./probes/probe_results.ts";
export type { ProbeConnect } from "./probes/probe_handlers.ts";
/** Predicate admission (upstream `predicate.go`): resources, node affinity, OS, ports, taints. */
export {
  admitPod,
  predicateAdmitter,
  toleratesTaint,
} from "./admission/predicate_admission.ts";
export {
  apiRuntimeHandlers,
  type RuntimeHandlerResolver,
  STANDALONE_RUNTIME_HANDLERS,
} from "./lifecycle/runtime_class.ts";
export {
  UNSUPPORTED_POD_FIELD_REASON,
  unsupportedPodField,
  withUnsupportedFieldRefusal,
} from "./admission/unsupported_pod_fields.ts";
export {
  APPARMOR_NOT_ADMITTED_REASON,
  appArmorHostError,
  appArmorRefusal,
  withAppArmorAdmission,
} from "./admission/apparmor_admission.ts";
export type {
  AdmitVerdict,
  PredicateAdmitterDeps,
} from "./admission/predicate_admission.ts";
/** Mirror pods: the API copies of static pods (`isMirrorPod` drops them from the API source). */
export {
  isMirrorPod,
  isStaticPod,
  mirrorPodFor,
  planMirrorPods,
} from "./static/mirror_pods.ts";
export type {
  MirrorDeletion,
  MirrorOwner,
  MirrorPlan,
} from "./static/mirror_pods.ts";
export { MirrorPodManager } from "./static/mirror_pod_manager.ts";
export type {
  MirrorPodApi,
  MirrorPodDeps,
  MirrorPodOptions,
} from "./static/mirror_pod_manager.ts";
/** Pod lifecycle events: the recorder seam and the involved-object references. */
export { containerReference, noPodEvents, podReference } from "./pod_events.ts";
export type { PodEventRecorder } from "./pod_events.ts";
/** Service environment variables (`enableServiceLinks`, the `kubernetes` Service). */
export {
  serviceEnvVars,
  type ServiceLister,
  SERVICES_NOT_SYNCED,
  serviceVariables,
} from "./env/service_env.ts";
export {
  type AllocationManager,
  createAllocationManager,
  type ResizeEnvironment,
} from "./resize/allocation_manager.ts";
export { dirCheckpointFiles } from "./resize/allocation_checkpoint.ts";
