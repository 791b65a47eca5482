import assert from "node:assert/strict";
import { createFeatureGates } from "../features/mod.ts";
import {
  defaultKubeletConfiguration,
  formatValidationIssues,
  type KubeletConfiguration,
  validateKubeletConfiguration,
} from "./mod.ts";

/** upstream validation_test.go `successConfig` (Linux, cgroup v2). */
function successConfig(): KubeletConfiguration {
  const c = defaultKubeletConfiguration();
  Object.assign(c, {
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ["pods", "system-reserved", "kube-reserved"],
    systemReservedCgroup: "/system.slice",
    kubeReservedCgroup: "/kubelet.service",
    podLogsDir: "/logs",
    imageMinimumGCAge: "0s",
    systemCgroups: "",
    cgroupRoot: "",
    eventBurst: 10,
    eventRecordQPS: 5,
    healthzPort: 10248,
    imageGCHighThresholdPercent: 85,
    imageGCLowThresholdPercent: 80,
    iptablesDropBit: 15,
    iptablesMasqueradeBit: 14,
    kubeAPIBurst: 10,
    kubeAPIQPS: 5,
    maxOpenFiles: 1000000,
    maxPods: 110,
    oomScoreAdj: -999,
    podsPerCore: 100,
    port: 65535,
    readOnlyPort: 0,
    registryBurst: 10,
    registryPullQPS: 5,
    hairpinMode: "promiscuous-bridge",
    nodeLeaseDurationSeconds: 1,
    cpuCFSQuotaPeriod: "25ms",
    topologyManagerScope: "pod",
    topologyManagerPolicy: "single-numa-node",
    shutdownGracePeriod: "30s",
    shutdownGracePeriodCriticalPods: "10s",
    memoryThrottlingFactor: 0.9,
    featureGates: {
      CustomCPUCFSQuotaPeriod: true,
      GracefulNodeShutdown: true,
      MemoryQoS: true,
      KubeletCrashLoopBackOffMax: true,
    },
    containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
    containerLogMaxWorkers: 1,
    containerLogMaxFiles: 5,
    containerLogMonitorInterval: "10s",
    crashLoopBackOff: { maxContainerRestartPeriod: "3s" },
    serializeImagePulls: false,
    enableSystemLogHandler: false,
    enableSystemLogQuery: false,
  });
  return c;
}

type Mutate = (c: KubeletConfiguration) => void;
/** [case name, mutation, expected substring ("" = valid), total issues]. */
type Case = [string, Mutate, string, number];

const IC = "invalid configuration: ";
const ENA = "enforceNodeAllocatable (--enforce-node-allocatable)";
const CLBO = (got: string) =>
  `${IC}CrashLoopBackOff.MaxContainerRestartPeriod (got: ${got} seconds) must be set between 1s and 300s`;
const CLBO_GATES = {
  KubeletCrashLoopBackOffMax: true,
  CustomCPUCFSQuotaPeriod: true,
};
const SYS_CG =
  `${IC}systemReservedCgroup (--system-reserved-cgroup) must be specified when "system-reserved" or "system-reserved-compressible" included in ${ENA}`;
const KUBE_CG =
  `${IC}kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "kube-reserved" or "kube-reserved-compressible" included in ${ENA}`;
const SHUTDOWN_GATE =
  `${IC}specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown`;
const RESERVED_CPUS =
  `${IC}can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)`;
const LOGS_PATH = (p: string, what: string) =>
  `${IC}pod logs path ${JSON.stringify(p)} ${what}`;

const CASES: Case[] = [
  ["Success", () => {}, "", 0],
  [
    "invalid NodeLeaseDurationSeconds",
    (c) => c.nodeLeaseDurationSeconds = 0,
    `${IC}nodeLeaseDurationSeconds must be greater than 0`,
    1,
  ],
  [
    "specify EnforceNodeAllocatable without enabling CgroupsPerQOS",
    (c) => {
      c.cgroupsPerQOS = false;
      c.enforceNodeAllocatable = ["pods"];
    },
    `${IC}cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods" contained in ${ENA}`,
    1,
  ],
  [
    "specify SystemCgroups without CgroupRoot",
    (c) => {
      c.systemCgroups = "/";
      c.cgroupRoot = "";
    },
    `${IC}systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified`,
    1,
  ],
  [
    "invalid EventBurst",
    (c) => c.eventBurst = -1,
    `${IC}eventBurst (--event-burst) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid EventRecordQPS",
    (c) => c.eventRecordQPS = -1,
    `${IC}eventRecordQPS (--event-qps) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid HealthzPort",
    (c) => c.healthzPort = 65536,
    `${IC}healthzPort (--healthz-port) 65536 must be between 1 and 65535, inclusive`,
    1,
  ],
  [
    "specify CPUCFSQuotaPeriod without enabling CPUCFSQuotaPeriod",
    (c) => {
      c.featureGates = { CustomCPUCFSQuotaPeriod: false };
      c.cpuCFSQuotaPeriod = "200ms";
    },
    `${IC}cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {200ms} requires feature gate CustomCPUCFSQuotaPeriod`,
    2,
  ],
  [
    "invalid CPUCFSQuotaPeriod",
    (c) => {
      c.featureGates = { CustomCPUCFSQuotaPeriod: true };
      c.cpuCFSQuotaPeriod = "2s";
    },
    `${IC}cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {2s} must be between 1ms and 1sec, inclusive`,
    2,
  ],
  [
    "invalid ImageGCHighThresholdPercent",
    (c) => c.imageGCHighThresholdPercent = 101,
    `${IC}imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be between 0 and 100, inclusive`,
    1,
  ],
  [
    "invalid ImageGCLowThresholdPercent",
    (c) => c.imageGCLowThresholdPercent = -1,
    `${IC}imageGCLowThresholdPercent (--image-gc-low-threshold) -1 must be between 0 and 100, inclusive`,
    1,
  ],
  [
    "ImageGCLowThresholdPercent is equal to ImageGCHighThresholdPercent",
    (c) => {
      c.imageGCHighThresholdPercent = 0;
      c.imageGCLowThresholdPercent = 0;
    },
    `${IC}imageGCLowThresholdPercent (--image-gc-low-threshold) 0 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 0`,
    1,
  ],
  [
    "ImageGCLowThresholdPercent is greater than ImageGCHighThresholdPercent",
    (c) => {
      c.imageGCHighThresholdPercent = 0;
      c.imageGCLowThresholdPercent = 1;
    },
    `${IC}imageGCLowThresholdPercent (--image-gc-low-threshold) 1 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 0`,
    1,
  ],
  [
    "invalid IPTablesDropBit",
    (c) => c.iptablesDropBit = 32,
    `${IC}iptablesDropBit (--iptables-drop-bit) 32 must be between 0 and 31, inclusive`,
    1,
  ],
  [
    "invalid IPTablesMasqueradeBit",
    (c) => c.iptablesMasqueradeBit = 32,
    `${IC}iptablesMasqueradeBit (--iptables-masquerade-bit) 32 must be between 0 and 31, inclusive`,
    1,
  ],
  [
    "invalid KubeAPIBurst",
    (c) => c.kubeAPIBurst = -1,
    `${IC}kubeAPIBurst (--kube-api-burst) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid KubeAPIQPS",
    (c) => c.kubeAPIQPS = -1,
    `${IC}kubeAPIQPS (--kube-api-qps) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid NodeStatusMaxImages",
    (c) => c.nodeStatusMaxImages = -2,
    `${IC}nodeStatusMaxImages (--node-status-max-images) -2 must be -1 or greater`,
    1,
  ],
  [
    "invalid MaxOpenFiles",
    (c) => c.maxOpenFiles = -1,
    `${IC}maxOpenFiles (--max-open-files) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid MaxPods",
    (c) => c.maxPods = -1,
    `${IC}maxPods (--max-pods) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid OOMScoreAdj",
    (c) => c.oomScoreAdj = 1001,
    `${IC}oomScoreAdj (--oom-score-adj) 1001 must be between -1000 and 1000, inclusive`,
    1,
  ],
  [
    "invalid PodsPerCore",
    (c) => c.podsPerCore = -1,
    `${IC}podsPerCore (--pods-per-core) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid Port",
    (c) => c.port = 65536,
    `${IC}port (--port) 65536 must be between 1 and 65535, inclusive`,
    1,
  ],
  [
    "invalid ReadOnlyPort",
    (c) => c.readOnlyPort = 65536,
    `${IC}readOnlyPort (--read-only-port) 65536 must be between 0 and 65535, inclusive`,
    1,
  ],
  [
    "invalid RegistryBurst",
    (c) => c.registryBurst = -1,
    `${IC}registryBurst (--registry-burst) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid RegistryPullQPS",
    (c) => c.registryPullQPS = -1,
    `${IC}registryPullQPS (--registry-qps) -1 must not be a negative number`,
    1,
  ],
  [
    "invalid MaxParallelImagePulls",
    (c) => c.maxParallelImagePulls = 0,
    `${IC}maxParallelImagePulls 0 must be a positive number`,
    1,
  ],
  [
    "invalid MaxParallelImagePulls and SerializeImagePulls combination",
    (c) => {
      c.maxParallelImagePulls = 3;
      c.serializeImagePulls = true;
    },
    `${IC}maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false`,
    1,
  ],
  [
    "valid MaxParallelImagePulls and SerializeImagePulls combination",
    (c) => {
      c.maxParallelImagePulls = 1;
      c.serializeImagePulls = true;
    },
    "",
    0,
  ],
  [
    "specify ServerTLSBootstrap without enabling RotateKubeletServerCertificate",
    (c) => {
      c.featureGates = { RotateKubeletServerCertificate: false };
      c.serverTLSBootstrap = true;
    },
    `${IC}serverTLSBootstrap true requires feature gate RotateKubeletServerCertificate`,
    3,
  ],
  [
    "invalid TopologyManagerPolicy",
    (c) => c.topologyManagerPolicy = "invalid-policy",
    `${IC}topologyManagerPolicy (--topology-manager-policy) "invalid-policy" must be one of: ["none" "best-effort" "restricted" "single-numa-node"]`,
    1,
  ],
  [
    "invalid TopologyManagerScope",
    (c) => c.topologyManagerScope = "invalid-scope",
    `${IC}topologyManagerScope (--topology-manager-scope) "invalid-scope" must be one of: "container", or "pod"`,
    1,
  ],
  [
    "ShutdownGracePeriodCriticalPods is greater than ShutdownGracePeriod",
    (c) => {
      c.featureGates = { GracefulNodeShutdown: true };
      c.shutdownGracePeriodCriticalPods = "2s";
      c.shutdownGracePeriod = "1s";
    },
    `${IC}shutdownGracePeriodCriticalPods {2s} must be <= shutdownGracePeriod {1s}`,
    3,
  ],
  [
    "ShutdownGracePeriod is less than 1 sec",
    (c) => {
      c.featureGates = { GracefulNodeShutdown: true };
      c.shutdownGracePeriod = "1ms";
    },
    `${IC}shutdownGracePeriod {1ms} must be either zero or otherwise >= 1 sec`,
    4,
  ],
  [
    "ShutdownGracePeriodCriticalPods is less than 1 sec",
    (c) => {
      c.featureGates = { GracefulNodeShutdown: true };
      c.shutdownGracePeriodCriticalPods = "1ms";
    },
    `${IC}shutdownGracePeriodCriticalPods {1ms} must be either zero or otherwise >= 1 sec`,
    3,
  ],
  [
    "specify ShutdownGracePeriod without enabling GracefulNodeShutdown",
    (c) => {
      c.featureGates = { GracefulNodeShutdown: false };
      c.shutdownGracePeriod = "1s";
    },
    SHUTDOWN_GATE,
    3,
  ],
  [
    "specify ShutdownGracePeriodCriticalPods without enabling GracefulNodeShutdown",
    (c) => {
      c.featureGates = { GracefulNodeShutdown: false };
      c.shutdownGracePeriodCriticalPods = "1s";
    },
    SHUTDOWN_GATE,
    3,
  ],
  [
    "invalid MemorySwap.SwapBehavior",
    (c) => {
      c.featureGates = { NodeSwap: true };
      c.memorySwap = { swapBehavior: "invalid-behavior" };
    },
    `${IC}memorySwap.swapBehavior "invalid-behavior" must be one of: "", "LimitedSwap" or "NoSwap"`,
    3,
  ],
  [
    "CrashLoopBackOff.MaxContainerRestartPeriod too low",
    (c) => {
      c.featureGates = { KubeletCrashLoopBackOffMax: true };
      c.crashLoopBackOff = { maxContainerRestartPeriod: "0s" };
    },
    CLBO("0"),
    2,
  ],
  [
    "CrashLoopBackOff.MaxContainerRestartPeriod too high",
    (c) => {
      c.featureGates = { KubeletCrashLoopBackOffMax: true };
      c.crashLoopBackOff = { maxContainerRestartPeriod: "301s" };
    },
    CLBO("301"),
    2,
  ],
  [
    "CrashLoopBackOff.MaxContainerRestartPeriod just a little too high",
    (c) => {
      c.featureGates = { ...CLBO_GATES };
      c.crashLoopBackOff = { maxContainerRestartPeriod: "300900ms" };
    },
    CLBO("300.9"),
    1,
  ],
  [
    "CrashLoopBackOff.MaxContainerRestartPeriod just a little too low",
    (c) => {
      c.featureGates = { ...CLBO_GATES };
      c.crashLoopBackOff = { maxContainerRestartPeriod: "999ms" };
    },
    CLBO("0.999"),
    1,
  ],
  [
    "KubeletCrashLoopBackOffMax feature gate on, no crashLoopBackOff config, ok",
    (c) => {
      c.featureGates = { ...CLBO_GATES };
    },
    "",
    0,
  ],
  [
    "KubeletCrashLoopBackOffMax feature gate on, but no crashLoopBackOff.MaxContainerRestartPeriod config",
    (c) => {
      c.featureGates = { ...CLBO_GATES };
      c.crashLoopBackOff = {};
    },
    `${IC}FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set`,
    1,
  ],
  [
    "specify SystemReservedEnforcementKey without specifying SystemReservedCgroup",
    (c) => {
      c.enforceNodeAllocatable = ["system-reserved"];
      c.systemReservedCgroup = "";
    },
    SYS_CG,
    1,
  ],
  [
    "specify SystemReservedCompressibleEnforcementKey without specifying SystemReservedCgroup",
    (c) => {
      c.enforceNodeAllocatable = ["system-reserved-compressible"];
      c.systemReservedCgroup = "";
    },
    SYS_CG,
    1,
  ],
  [
    "specify SystemReservedCompressibleEnforcementKey with SystemReservedEnforcementKey",
    (c) => {
      c.enforceNodeAllocatable = [
        "system-reserved-compressible",
        "system-reserved",
      ];
    },
    `${IC}both "system-reserved" and "system-reserved-compressible" cannot be specified together in ${ENA}`,
    1,
  ],
  [
    "specify KubeReservedCompressibleEnforcementKey without specifying KubeReservedCgroup",
    (c) => {
      c.enforceNodeAllocatable = ["kube-reserved-compressible"];
      c.kubeReservedCgroup = "";
    },
    KUBE_CG,
    1,
  ],
  [
    "specify KubeReservedEnforcementKey without specifying KubeReservedCgroup",
    (c) => {
      c.enforceNodeAllocatable = ["kube-reserved"];
      c.kubeReservedCgroup = "";
    },
    KUBE_CG,
    1,
  ],
  [
    "specify KubeReservedCompressibleEnforcementKey with KubeReservedEnforcementKey",
    (c) => {
      c.enforceNodeAllocatable = [
        "kube-reserved-compressible",
        "kube-reserved",
      ];
    },
    `${IC}both "kube-reserved" and "kube-reserved-compressible" cannot be specified together in ${ENA}`,
    1,
  ],
  [
    "specify NodeAllocatableNoneKey with additional enforcements",
    (c) => {
      c.enforceNodeAllocatable = ["none", "kube-reserved"];
    },
    `${IC}${ENA} may not contain additional enforcements when "none" is specified`,
    1,
  ],
  [
    "duplicated EnforceNodeAllocatable",
    (c) => {
      c.enforceNodeAllocatable = ["none", "none"];
    },
    `${IC}duplicated enforcements "none" in ${ENA}`,
    2,
  ],
  [
    "invalid EnforceNodeAllocatable",
    (c) => {
      c.enforceNodeAllocatable = ["invalid-enforce-node-allocatable"];
    },
    `${IC}option "invalid-enforce-node-allocatable" specified for ${ENA}. Valid options are "pods", "system-reserved", "system-reserved-compressible", "kube-reserved", "kube-reserved-compressible" or "none"`,
    1,
  ],
  [
    "invalid HairpinMode",
    (c) => c.hairpinMode = "invalid-hair-pin-mode",
    `${IC}option "invalid-hair-pin-mode" specified for hairpinMode (--hairpin-mode). Valid options are "none", "hairpin-veth" or "promiscuous-bridge"`,
    1,
  ],
  [
    "specify ReservedSystemCPUs with SystemReservedCgroup",
    (c) => {
      c.reservedSystemCPUs = "0-3";
      c.systemReservedCgroup = "/system.slice";
    },
    RESERVED_CPUS,
    1,
  ],
  [
    "specify ReservedSystemCPUs with KubeReservedCgroup",
    (c) => {
      c.reservedSystemCPUs = "0-3";
      c.kubeReservedCgroup = "/system.slice";
    },
    RESERVED_CPUS,
    1,
  ],
  [
    "invalid ReservedSystemCPUs",
    (c) => c.reservedSystemCPUs = "invalid-reserved-system-cpus",
    `${IC}unable to parse reservedSystemCPUs (--reserved-cpus) invalid-reserved-system-cpus, error:`,
    2,
  ],
  [
    "enable MemoryQoS without specifying MemoryThrottlingFactor",
    (c) => {
      c.featureGates = { MemoryQoS: true };
      delete (c as Partial<KubeletConfiguration>).memoryThrottlingFactor;
    },
    `${IC}memoryThrottlingFactor is required when MemoryQoS feature flag is enabled`,
    3,
  ],
  [
    "invalid MemoryThrottlingFactor",
    (c) => c.memoryThrottlingFactor = 1.1,
    `${IC}memoryThrottlingFactor 1.1 must be greater than 0 and less than or equal to 1.0`,
    1,
  ],
  [
    "invalid Taint.TimeAdded",
    (c) => {
      c.registerWithTaints = [{
        key: "",
        effect: "",
        timeAdded: "2025-01-01T00:00:00Z",
      }];
    },
    `${IC}taint.TimeAdded is not nil`,
    2,
  ],
  [
    "specify tracing invalid sampling rate",
    (c) => c.tracing = { samplingRatePerMillion: -1 },
    "tracing.samplingRatePerMillion: Invalid value: -1: sampling rate must be positive",
    1,
  ],
  [
    "specify tracing invalid endpoint",
    (c) => c.tracing = { endpoint: "dn%2s://localhost:4317" },
    `tracing.endpoint: Invalid value: "dn%2s://localhost:4317": parse "dn%2s://localhost:4317": first path segment in URL cannot contain colon`,
    1,
  ],
  [
    "invalid GracefulNodeShutdownBasedOnPodPriority",
    (c) => {
      c.featureGates = { GracefulNodeShutdownBasedOnPodPriority: true };
      c.shutdownGracePeriodByPodPriority = [{
        priority: 0,
        shutdownGracePeriodSeconds: 0,
      }];
    },
    `${IC}Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time`,
    3,
  ],
  [
    "Specifying shutdownGracePeriodByPodPriority without enable GracefulNodeShutdownBasedOnPodPriority",
    (c) => {
      c.featureGates = { GracefulNodeShutdownBasedOnPodPriority: false };
      c.shutdownGracePeriodByPodPriority = [{
        priority: 0,
        shutdownGracePeriodSeconds: 0,
      }];
    },
    `${IC}Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority`,
    3,
  ],
  [
    "enableSystemLogQuery is enabled without NodeLogQuery feature gate",
    (c) => {
      c.featureGates = { NodeLogQuery: false };
      c.enableSystemLogQuery = true;
    },
    `${IC}NodeLogQuery feature gate is required for enableSystemLogHandler`,
    4,
  ],
  [
    "enableSystemLogQuery is enabled without enableSystemLogHandler",
    (c) => {
      c.featureGates = { NodeLogQuery: true };
      c.enableSystemLogHandler = false;
      c.enableSystemLogQuery = true;
    },
    `${IC}enableSystemLogHandler is required for enableSystemLogQuery`,
    3,
  ],
  [
    "imageMaximumGCAge should not be specified without feature gate",
    (c) => {
      c.featureGates = { ImageMaximumGCAge: false };
      c.imageMaximumGCAge = "1ns";
    },
    `${IC}ImageMaximumGCAge feature gate is required for Kubelet configuration option imageMaximumGCAge`,
    3,
  ],
  [
    "imageMaximumGCAge should not be negative",
    (c) => {
      c.featureGates = { ImageMaximumGCAge: true };
      c.imageMaximumGCAge = "-1ns";
    },
    `${IC}imageMaximumGCAge -1ns must not be negative`,
    3,
  ],
  [
    "imageMaximumGCAge should not be less than imageMinimumGCAge",
    (c) => {
      c.featureGates = { ImageMaximumGCAge: true };
      c.imageMaximumGCAge = "1ns";
      c.imageMinimumGCAge = "2ns";
    },
    `${IC}imageMaximumGCAge 1ns must be greater than imageMinimumGCAge 2ns`,
    3,
  ],
  [
    "containerLogMaxWorkers must be greater than or equal to 1",
    (c) => c.containerLogMaxWorkers = 0,
    `${IC}containerLogMaxWorkers must be greater than or equal to 1`,
    1,
  ],
  [
    "containerLogMonitorInterval must be a positive time duration",
    (c) => c.containerLogMonitorInterval = "-1s",
    `${IC}containerLogMonitorInterval must be a positive time duration greater than or equal to 3s`,
    1,
  ],
  [
    "containerLogMonitorInterval must be at least 3s or higher",
    (c) => c.containerLogMonitorInterval = "2s",
    `${IC}containerLogMonitorInterval must be a positive time duration greater than or equal to 3s`,
    1,
  ],
  [
    "pod logs path must be not empty",
    (c) => c.podLogsDir = "",
    `${IC}podLogsDir was not specified`,
    3,
  ],
  [
    "pod logs path must be absolute",
    (c) => c.podLogsDir = "./test",
    LOGS_PATH("./test", "must be absolute path"),
    2,
  ],
  [
    "pod logs path must be normalized",
    (c) => c.podLogsDir = "/path/../",
    LOGS_PATH("/path/../", "must be normalized"),
    1,
  ],
  [
    "pod logs path is ascii only",
    (c) => c.podLogsDir = "/🧪",
    LOGS_PATH("/🧪", "mut contains ASCII characters only"),
    1,
  ],
  [
    "invalid containerLogMaxFiles",
    (c) => c.containerLogMaxFiles = 1,
    `${IC}containerLogMaxFiles must be greater than 1`,
    1,
  ],
  [
    "invalid ContainerRuntimeEndpoint",
    (c) => c.containerRuntimeEndpoint = "",
    `${IC}the containerRuntimeEndpoint was not specified or empty`,
    1,
  ],
  [
    "invalid Logging configuration",
    (c) => c.logging.format = "invalid",
    `logging.format: Invalid value: "invalid": Unsupported log format`,
    1,
  ],
  [
    "invalid imagePullCredentialsVerificationPolicy configuration",
    (c) => {
      c.featureGates = { KubeletEnsureSecretPulledImages: true };
      c.imagePullCredentialsVerificationPolicy = "invalid";
    },
    `option "invalid" specified for imagePullCredentialsVerificationPolicy. Valid options are "NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"]`,
    3,
  ],
  [
    "invalid PreloadedImagesVerificationAllowlist configuration - featuregate enabled",
    (c) => {
      c.featureGates = { KubeletEnsureSecretPulledImages: true };
      c.imagePullCredentialsVerificationPolicy = "NeverVerify";
      c.preloadedImagesVerificationAllowlist = ["test.test/repo"];
    },
    'can\'t set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not "NeverVerifyAllowlistedImages"]',
    3,
  ],
  [
    "invalid PreloadedImagesVerificationAllowlist configuration - featuregate disabled",
    (c) => {
      c.featureGates = { KubeletEnsureSecretPulledImages: false };
      c.imagePullCredentialsVerificationPolicy = "NeverVerify";
    },
    `${IC}\`imagePullCredentialsVerificationPolicy\` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled`,
    3,
  ],
  [
    "invalid PreloadedImagesVerificationAllowlist configuration",
    (c) => {
      c.featureGates = { KubeletEnsureSecretPulledImages: false };
      c.preloadedImagesVerificationAllowlist = ["test.test/repo"];
    },
    `${IC}\`preloadedImagesVerificationAllowlist\` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled`,
    3,
  ],
  [
    "invalid FeatureGate",
    (c) => {
      c.featureGates = { ...c.featureGates, invalid: true };
    },
    "unrecognized feature gate: invalid",
    1,
  ],
];

Deno.test("validateKubeletConfiguration() passes all 84 upstream TestValidateKubeletConfiguration cases", () => {
  assert.equal(CASES.length, 84);
  const failures: string[] = [];
  // successConfig sets singleProcessOOMKill = !cgroupv2 on Linux.
  for (const cgroupVersion of [2, 1] as const) {
    for (const [name, mutate, expected, total] of CASES) {
      const config = successConfig();
      config.singleProcessOOMKill = cgroupVersion === 1;
      mutate(config);
      const issues = validateKubeletConfiguration(
        config,
        createFeatureGates(),
        { os: "linux", cgroupVersion },
      );
      const text = formatValidationIssues(issues);
      const label = `${name} (cgroup v${cgroupVersion})`;
      if (expected === "" ? issues.length !== 0 : !text.includes(expected)) {
        failures.push(`${label}: got ${JSON.stringify(text)}`);
      } else if (issues.length !== total) {
        failures.push(
          `${label}: want ${total} issues, got ${issues.length}: ${text}`,
        );
      }
    }
  }
  assert.deepEqual(failures, []);
});
