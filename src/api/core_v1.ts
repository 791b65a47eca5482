/**
 * Plain JSON shapes of the Kubernetes core/v1 Pod as it appears in manifests and on the wire:
 * the one copy of the pod model, shared by the pod code, the status cache and the API client.
 *
 * Our own shapes rather than a package's: `@kubernetes/client-node`'s models are classes that
 * type timestamps as `Date` (they deserialize), and `kubernetes-types` stops at v1.30. Only the
 * fields the kubelet reads or writes are typed; unknown fields pass through untouched.
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

/** core/v1 EnvFromSource: every key of a ConfigMap or Secret, with an optional prefix. */
export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
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

/** core/v1 ContainerResizePolicy. */
export interface ContainerResizePolicy {
  resourceName: string;
  restartPolicy: "NotRequired" | "RestartContainer";
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

/** core/v1 SELinuxOptions. */
export interface SELinuxOptions {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
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
  seLinuxOptions?: SELinuxOptions;
  /** `Unmasked` sends no masked or read-only /proc paths. */
  procMount?: "Default" | "Unmasked";
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
  seLinuxOptions?: SELinuxOptions;
  supplementalGroupsPolicy?: "Merge" | "Strict";
}

/** core/v1 VolumeMount. */
export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
  /** Like subPath, with `$(VAR)` references to the container's env. */
  subPathExpr?: string;
  mountPropagation?: "None" | "HostToContainer" | "Bidirectional";
  /** Whether submounts of a read-only mount are read-only too (`Disabled` when absent). */
  recursiveReadOnly?: "Disabled" | "IfPossible" | "Enabled";
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
  envFrom?: EnvFromSource[];
  resources?: ResourceRequirements;
  /** Per resource, whether an in-place resize restarts the container. */
  resizePolicy?: ContainerResizePolicy[];
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

/** core/v1 Volume: its name and one source (read by src/volume). */
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
  automountServiceAccountToken?: boolean;
  /** Secrets with registry credentials for this pod's image pulls. */
  imagePullSecrets?: { name?: string }[];
  nodeName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  shareProcessNamespace?: boolean;
  securityContext?: PodSecurityContext;
  hostname?: string;
  subdomain?: string;
  setHostnameAsFQDN?: boolean;
  tolerations?: Toleration[];
  priorityClassName?: string;
  priority?: number;
  runtimeClassName?: string;
  enableServiceLinks?: boolean;
  /** Condition types (set by others) that must be True, with the containers, for Ready. */
  readinessGates?: { conditionType: string }[];
  /** Pod-level requests and limits (cpu, memory), when set. */
  resources?: ResourceRequirements;
  /** Resources the runtime class adds for the sandbox itself. */
  overhead?: Record<string, string | number>;
  /** Extra /etc/hosts entries. */
  hostAliases?: HostAlias[];
  /** Debug containers added through the pods/ephemeralcontainers subresource. */
  ephemeralContainers?: EphemeralContainer[];
}

/**
 * core/v1 EphemeralContainer: a container (no ports, probes, lifecycle or resources, by API
 * validation) that may join the process namespace of `targetContainerName`.
 */
export interface EphemeralContainer extends Container {
  targetContainerName?: string;
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
  /** The pod generation the condition was computed for. */
  observedGeneration?: number;
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
  /** Requests and limits of a running container. */
  resources?: ResourceRequirements;
  /** The requests the node allocated to the container (in-place resize). */
  allocatedResources?: Record<string, string | number>;
  /** The container's volume mounts as set up. */
  volumeMounts?: VolumeMountStatus[];
}

/** core/v1 VolumeMountStatus. */
export interface VolumeMountStatus {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  recursiveReadOnly?: "Disabled" | "Enabled";
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
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: string;
  /** The pod generation this status was computed for. */
  observedGeneration?: number;
}

/** core/v1 Pod. */
export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}
