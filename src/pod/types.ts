/**
 * Plain JSON shapes of the Kubernetes core/v1 Pod (as it appears in YAML/JSON manifests) and the
 * pod lifecycle contracts shared by the pod workers and the pod syncer.
 *
 * These types deliberately do not import `@kubernetes/client-node`: the static-pod path must not
 * load it. Only the fields the kubelet reads or writes are typed; unknown fields are preserved by
 * the index signatures where manifests commonly carry them.
 *
 * @module
 */

/** core/v1 ObjectMeta (the subset the kubelet uses). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** RFC 3339 timestamp. */
  creationTimestamp?: string;
  /** RFC 3339 timestamp; set when graceful deletion was requested. */
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** core/v1 OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Pod-level restart policy. */
export type RestartPolicy = "Always" | "OnFailure" | "Never";
/** Container image pull policy. */
export type PullPolicy = "Always" | "IfNotPresent" | "Never";
/** Container port protocol. */
export type Protocol = "TCP" | "UDP" | "SCTP";
/** Pod DNS policy. */
export type DNSPolicy =
  | "ClusterFirst"
  | "ClusterFirstWithHostNet"
  | "Default"
  | "None";
/** How the termination message is read. */
export type TerminationMessagePolicy = "File" | "FallbackToLogsOnError";

/** core/v1 ObjectFieldSelector (env valueFrom.fieldRef). */
export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

/** core/v1 ResourceFieldSelector (env valueFrom.resourceFieldRef). */
export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: string | number;
}

/** core/v1 ConfigMapKeySelector / SecretKeySelector. */
export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

/** core/v1 EnvVarSource. */
export interface EnvVarSource {
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  configMapKeyRef?: KeySelector;
  secretKeyRef?: KeySelector;
}

/** core/v1 EnvVar. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

/** core/v1 ContainerPort. */
export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: Protocol;
}

/** core/v1 ExecAction. */
export interface ExecAction {
  command?: string[];
}

/** core/v1 HTTPHeader. */
export interface HTTPHeader {
  name: string;
  value: string;
}

/** core/v1 HTTPGetAction. */
export interface HTTPGetAction {
  path?: string;
  port: number | string;
  host?: string;
  scheme?: "HTTP" | "HTTPS";
  httpHeaders?: HTTPHeader[];
}

/** core/v1 TCPSocketAction. */
export interface TCPSocketAction {
  port: number | string;
  host?: string;
}

/** core/v1 GRPCAction. */
export interface GRPCAction {
  port: number;
  service?: string;
}

/** core/v1 Probe (handler fields inlined as in the API). */
export interface Probe {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  grpc?: GRPCAction;
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

/** core/v1 LifecycleHandler. */
export interface LifecycleHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  sleep?: { seconds: number };
}

/** core/v1 Lifecycle. */
export interface Lifecycle {
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
}

/** core/v1 ResourceRequirements (quantities kept as the manifest wrote them). */
export interface ResourceRequirements {
  limits?: Record<string, string | number>;
  requests?: Record<string, string | number>;
}

/** core/v1 Capabilities. */
export interface Capabilities {
  add?: string[];
  drop?: string[];
}

/** core/v1 SeccompProfile / AppArmorProfile. */
export interface SecurityProfile {
  type: "RuntimeDefault" | "Unconfined" | "Localhost";
  localhostProfile?: string;
}

/** core/v1 SecurityContext (container level). */
export interface SecurityContext {
  capabilities?: Capabilities;
  privileged?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  seccompProfile?: SecurityProfile;
  appArmorProfile?: SecurityProfile;
}

/** core/v1 PodSecurityContext. */
export interface PodSecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  supplementalGroups?: number[];
  fsGroup?: number;
  sysctls?: { name: string; value: string }[];
  seccompProfile?: SecurityProfile;
  appArmorProfile?: SecurityProfile;
}

/** core/v1 VolumeMount. */
export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}

/** core/v1 Container (also used for init containers). */
export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  env?: EnvVar[];
  resources?: ResourceRequirements;
  /** Only valid on init containers: `Always` marks a sidecar. */
  restartPolicy?: "Always";
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: Lifecycle;
  terminationMessagePath?: string;
  terminationMessagePolicy?: TerminationMessagePolicy;
  imagePullPolicy?: PullPolicy;
  securityContext?: SecurityContext;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

/** core/v1 PodDNSConfig. */
export interface PodDNSConfig {
  nameservers?: string[];
  searches?: string[];
  options?: { name: string; value?: string }[];
}

/** core/v1 Toleration. */
export interface Toleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
  tolerationSeconds?: number;
}

/** core/v1 Volume (only the name is interpreted by this kubelet so far). */
export interface Volume {
  name: string;
  [source: string]: unknown;
}

/** core/v1 PodSpec. */
export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  dnsPolicy?: DNSPolicy;
  dnsConfig?: PodDNSConfig;
  nodeSelector?: Record<string, string>;
  serviceAccountName?: string;
  nodeName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  shareProcessNamespace?: boolean;
  securityContext?: PodSecurityContext;
  hostname?: string;
  subdomain?: string;
  tolerations?: Toleration[];
  priorityClassName?: string;
  priority?: number;
  runtimeClassName?: string;
  enableServiceLinks?: boolean;
  /** Pod-level requests and limits (cpu, memory), when set. */
  resources?: ResourceRequirements;
  /** Resources the runtime class adds for the sandbox itself. */
  overhead?: Record<string, string | number>;
  /** Extra /etc/hosts entries. */
  hostAliases?: HostAlias[];
}

/** core/v1 HostAlias. */
export interface HostAlias {
  ip: string;
  hostnames?: string[];
}

/** Pod phase. */
export type PodPhase =
  | "Pending"
  | "Running"
  | "Succeeded"
  | "Failed"
  | "Unknown";
/** Condition status. */
export type ConditionStatus = "True" | "False" | "Unknown";

/** core/v1 PodCondition. */
export interface PodCondition {
  type: string;
  status: ConditionStatus;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** core/v1 ContainerStateWaiting. */
export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

/** core/v1 ContainerStateRunning. */
export interface ContainerStateRunning {
  startedAt?: string;
}

/** core/v1 ContainerStateTerminated. */
export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

/** core/v1 ContainerState: at most one member is set. */
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

/** core/v1 ContainerStatus. */
export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
}

/** core/v1 PodIP / HostIP. */
export interface PodIP {
  ip: string;
}

/** core/v1 PodStatus. */
export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: PodIP[];
  podIP?: string;
  podIPs?: PodIP[];
  /** RFC 3339 timestamp. */
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: string;
}

/** core/v1 Pod. */
export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

/** What a pod worker is asked to do with a pod. */
export type PodUpdateType = "create" | "update" | "sync" | "kill";

/** One unit of work handed from the pod workers to the {@linkcode PodSyncer}. */
export interface PodWork {
  pod: Pod;
  updateType: PodUpdateType;
  /** Effective grace period (seconds) decided by the pod worker; overrides the pod's own. */
  gracePeriodSeconds?: number;
  /**
   * The pod exists only in the runtime (an orphan found by housekeeping; upstream's `RunningPod`
   * kill): `pod` is a stand-in built from runtime labels with no containers in its spec.
   */
  runtimeOnly?: boolean;
}

/** Result of {@linkcode PodSyncer.syncPod}. */
export interface PodSyncOutcome {
  /** The pod has finished; the worker should move it to terminating. */
  terminal: boolean;
  /**
   * Set when a container is waiting for a back-off (CrashLoopBackOff, ImagePullBackOff) or a
   * step failed: ms from now after which another sync can make progress. Workers should requeue
   * the pod then (bounded by the resync interval) instead of waiting for the next resync.
   */
  retryAfterMs?: number;
}

/**
 * The pod lifecycle as seen by the pod workers. Each method is called by at most one worker per
 * pod UID at a time (calls for one UID are serialized). All methods are idempotent; when `signal`
 * aborts, the method stops issuing new runtime calls and rejects with the abort reason.
 */
export interface PodSyncer {
  /**
   * Bring the running pod towards its spec once. Returns `terminal: true` when the pod has
   * finished (all containers done for Never/OnFailure, or a failed init container with Never).
   * Per-container failures (back-off, image pull errors) do not reject; they are reflected in
   * the pod status. Rejects only on infrastructure errors (e.g. the runtime is unreachable).
   */
  syncPod(work: PodWork, signal: AbortSignal): Promise<PodSyncOutcome>;
  /** Stop all containers within the grace period, then the sandbox(es). Idempotent. */
  syncTerminatingPod(work: PodWork, signal: AbortSignal): Promise<void>;
  /**
   * Final step of a terminated pod: record its final status and release what the kubelet holds
   * for it. Exited containers and the stopped sandbox stay in the runtime (their logs and exit
   * codes stay readable, a restarted kubelet sees the pod finished); container GC removes them
   * once the pod is deleted (upstream `SyncTerminatedPod`). Idempotent.
   */
  syncTerminatedPod(work: PodWork, signal: AbortSignal): Promise<void>;
  /**
   * Stops every container and sandbox of a pod that only the runtime knows (`work.runtimeOnly`)
   * with `work.gracePeriodSeconds`; records no status (upstream `SyncTerminatingRuntimePod`).
   * Optional: without it the workers call `syncTerminatingPod`.
   */
  syncTerminatingRuntimePod?(work: PodWork, signal: AbortSignal): Promise<void>;
}

/** `namespace/name` of a pod, for logs and messages. */
export function podFullName(pod: Pod): string {
  return `${pod.metadata.namespace ?? "default"}/${pod.metadata.name ?? ""}`;
}

/** Runtime (CRI) view of one sandbox of a pod, decoupled from the wire message types. */
export interface SandboxView {
  id: string;
  /** `PodSandboxMetadata.attempt`. */
  attempt: number;
  ready: boolean;
  /** Creation time, ms since the epoch. */
  createdAt: number;
  /** Primary pod IP ("" when unknown or host network). */
  ip: string;
  additionalIps: string[];
  /** Network namespace mode reported by the runtime, when it reported one. */
  networkMode?: "pod" | "container" | "node" | "target";
}

/** Runtime container state, lower-cased from CRI's `ContainerState`. */
export type RuntimeContainerState =
  | "created"
  | "running"
  | "exited"
  | "unknown";

/** Runtime (CRI) view of one container instance of a pod. */
export interface ContainerView {
  id: string;
  name: string;
  sandboxId: string;
  state: RuntimeContainerState;
  /** ms since the epoch; 0 when unknown. */
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  /** Image as requested (`ContainerStatus.image.image`). */
  image: string;
  /** Resolved image reference (digest) from the runtime. */
  imageRef: string;
  /** `io.kubernetes.container.hash` annotation ("" when missing). */
  hash: string;
  /** `io.kubernetes.container.restartCount` annotation (0 when missing). */
  restartCount: number;
  /** `io.kubernetes.container.type`: "init" | "container" | "ephemeral" ("" when missing). */
  containerType: string;
  /** Termination grace period recorded on the container (seconds), if any. */
  terminationGracePeriodSeconds?: number;
  /** Host path mounted at the container's `terminationMessagePath`, if any. */
  terminationMessageHostPath?: string;
  /** `io.kubernetes.container.terminationMessagePolicy` annotation, if any. */
  terminationMessagePolicy?: string;
  /** Absolute path of the container's CRI log file, if the runtime reports one. */
  logPath?: string;
}

/**
 * What the runtime knows about one pod: its sandboxes and container instances, each sorted
 * newest first.
 */
export interface PodRuntimeStatus {
  uid: string;
  name: string;
  namespace: string;
  sandboxes: SandboxView[];
  containers: ContainerView[];
}

/** The step of a sync a {@linkcode SyncResult} belongs to (kubelet's `SyncAction`). */
export type SyncAction =
  | "StartContainer"
  | "KillContainer"
  | "CreatePodSandbox"
  | "ConfigPodSandbox"
  | "KillPodSandbox"
  | "InitContainer";

/**
 * Outcome of one step of a sync. A missing `reason` means success; otherwise `reason` is the
 * upstream error reason (e.g. "CrashLoopBackOff", "ErrImagePull", "CreatePodSandboxError").
 */
export interface SyncResult {
  action: SyncAction;
  /** Container name or sandbox id the step acted on. */
  target: string;
  reason?: string;
  message?: string;
  /** For back-off failures: ms epoch at which a retry may succeed. */
  retryAt?: number;
}
