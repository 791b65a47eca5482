/**
 * The pod lifecycle contracts shared by the pod workers and the pod syncer, and the runtime's
 * view of a pod. The core/v1 pod model itself lives in `src/api/core_v1.ts` and is re-exported
 * here for the pod code.
 *
 * @module
 */

import type { Container, Pod } from "../api/mod.ts";

export type {
  Capabilities,
  ConditionStatus,
  Container,
  ContainerPort,
  ContainerState,
  ContainerStateRunning,
  ContainerStateTerminated,
  ContainerStateWaiting,
  ContainerStatus,
  DNSPolicy,
  EnvVar,
  EnvVarSource,
  EphemeralContainer,
  ExecAction,
  GRPCAction,
  HostAlias,
  HTTPGetAction,
  HTTPHeader,
  KeySelector,
  Lifecycle,
  LifecycleHandler,
  ObjectFieldSelector,
  ObjectMeta,
  OwnerReference,
  Pod,
  PodCondition,
  PodDNSConfig,
  PodIP,
  PodPhase,
  PodSecurityContext,
  PodSpec,
  PodStatus,
  Probe,
  Protocol,
  PullPolicy,
  ResourceFieldSelector,
  ResourceRequirements,
  RestartPolicy,
  SecurityContext,
  SecurityProfile,
  TCPSocketAction,
  TerminationMessagePolicy,
  Toleration,
  Volume,
  VolumeMount,
} from "../api/mod.ts";

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
   * Set when a container is waiting for a back-off (CrashLoopBackOff, ImagePullBackOff), a
   * step failed or the pod has an active deadline: ms from now after which another sync can
   * make progress (or must fail the pod). Workers should requeue the pod then (bounded by the
   * resync interval) instead of waiting for the next resync.
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

/** True for init containers declared with `restartPolicy: Always` (sidecars). */
export function isSidecar(container: Container): boolean {
  return container.restartPolicy === "Always";
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
  /** The cgroup figures the runtime reports it applied (CRI `ContainerStatus.resources`). */
  resources?: RuntimeContainerResources;
}

/** CRI `LinuxContainerResources` figures read back into status (0: not reported). */
export interface RuntimeContainerResources {
  cpuPeriod: number;
  cpuQuota: number;
  cpuShares: number;
  memoryLimitBytes: number;
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
  | "InitContainer"
  | "ResizePodInPlace";

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
