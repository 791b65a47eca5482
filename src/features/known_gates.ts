/**
 * The feature gates a v1.34 kubelet knows, with upstream v1.34 defaults.
 * Only gates that matter to the node (kubelet, logging, tracing, the
 * kubelet's config validation) are listed; the list is data, not code.
 * @module
 */

/** Maturity of a gate, as printed in `--feature-gates` help. */
export type FeatureStage = "ALPHA" | "BETA" | "GA" | "DEPRECATED";

/** One gate's registration. */
export interface FeatureSpec {
  readonly default: boolean;
  readonly stage: FeatureStage;
  readonly lockToDefault?: boolean;
}

function alpha(): FeatureSpec {
  return { default: false, stage: "ALPHA" };
}
function beta(on: boolean): FeatureSpec {
  return { default: on, stage: "BETA" };
}
function ga(locked: boolean): FeatureSpec {
  return { default: true, stage: "GA", lockToDefault: locked };
}
function deprecated(on: boolean, locked = false): FeatureSpec {
  return { default: on, stage: "DEPRECATED", lockToDefault: locked };
}

/** v1.34 gate table (upstream defaults, Linux build). */
export const KNOWN_FEATURES: Readonly<Record<string, FeatureSpec>> = {
  // Gates the config validation reads (kubelet-config.md section 4).
  CustomCPUCFSQuotaPeriod: alpha(),
  GracefulNodeShutdown: beta(true),
  GracefulNodeShutdownBasedOnPodPriority: beta(true),
  ImageMaximumGCAge: beta(true),
  KubeletCrashLoopBackOffMax: alpha(),
  KubeletEnsureSecretPulledImages: alpha(),
  KubeletTracing: ga(true),
  MemoryQoS: alpha(),
  NodeLogQuery: beta(false),
  NodeSwap: ga(true),
  RotateKubeletServerCertificate: beta(true),
  UserNamespacesSupport: beta(true),
  // component-base logging gates.
  ContextualLogging: beta(true),
  LoggingAlphaOptions: alpha(),
  LoggingBetaOptions: beta(true),
  // Other node-side gates.
  AllowDNSOnlyNodeCSR: deprecated(false),
  AllowInsecureKubeletCertificateSigningRequests: deprecated(false),
  APIServerTracing: beta(true),
  ClusterTrustBundle: beta(false),
  ClusterTrustBundleProjection: beta(false),
  ComponentFlagz: alpha(),
  ComponentStatusz: alpha(),
  ContainerCheckpoint: beta(true),
  ContainerStopSignals: alpha(),
  CPUManagerPolicyAlphaOptions: alpha(),
  CPUManagerPolicyBetaOptions: beta(true),
  CPUManagerPolicyOptions: ga(true),
  DevicePluginCDIDevices: ga(true),
  DisableCPUQuotaWithExclusiveCPUs: beta(true),
  DynamicResourceAllocation: ga(false),
  EnvFiles: alpha(),
  ExecProbeTimeout: ga(false),
  HostnameOverride: alpha(),
  ImageVolume: beta(false),
  InPlacePodVerticalScaling: beta(true),
  InPlacePodVerticalScalingExclusiveCPUs: alpha(),
  InPlacePodVerticalScalingExclusiveMemory: alpha(),
  KubeletCgroupDriverFromCRI: ga(false),
  KubeletFineGrainedAuthz: beta(true),
  KubeletInUserNamespace: alpha(),
  KubeletPodResourcesDynamicResources: alpha(),
  KubeletPodResourcesGet: alpha(),
  KubeletPSI: beta(true),
  KubeletRegistrationGetOnExistsOnly: deprecated(false),
  KubeletSeparateDiskGC: beta(true),
  LocalStorageCapacityIsolationFSQuotaMonitoring: beta(false),
  MemoryManager: ga(true),
  PodAndContainerStatsFromCRI: alpha(),
  PodCertificateRequest: alpha(),
  PodLevelResources: beta(true),
  PodLifecycleSleepAction: ga(false),
  PodLifecycleSleepActionAllowZero: beta(true),
  PodLogsQuerySplitStreams: alpha(),
  PodObservedGenerationTracking: beta(true),
  PodReadyToStartContainersCondition: beta(true),
  ProcMountType: beta(true),
  RecursiveReadOnlyMounts: ga(true),
  RelaxedDNSSearchValidation: beta(true),
  RelaxedEnvironmentVariableValidation: ga(false),
  ResourceHealthStatus: alpha(),
  SELinuxChangePolicy: beta(true),
  SELinuxMount: beta(false),
  SELinuxMountReadWriteOncePod: beta(true),
  SidecarContainers: ga(true),
  SizeMemoryBackedVolumes: ga(true),
  SupplementalGroupsPolicy: beta(true),
  SystemdWatchdog: beta(true),
  TopologyManagerPolicyAlphaOptions: alpha(),
  TopologyManagerPolicyBetaOptions: beta(true),
  TopologyManagerPolicyOptions: ga(true),
  WindowsCPUAndMemoryAffinity: alpha(),
  WindowsGracefulNodeShutdown: beta(true),
  WindowsHostNetwork: alpha(),
};
