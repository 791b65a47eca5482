/**
 * The checks of upstream `ValidateKubeletConfiguration`
 * (pkg/kubelet/apis/config/validation/validation.go) as data: one entry per
 * check, in upstream code order, each returning zero or more messages in
 * upstream wording. The order of the whole pass is in
 * docs/flags-and-config.md ("Validation").
 * @module
 */
import {
  between,
  crashLoopBackOff,
  enforceNodeAllocatable,
  IC,
  imagePullCredentials,
  negative,
  podLogsDir,
  range,
  reservedMemory,
  type Rule,
  shutdown,
} from "./validation_checks.ts";
import {
  cpusetProblem,
  goDuration,
  metaDuration,
  ms,
  q,
} from "./validation_support.ts";
import { taintProblems } from "./validation_taints.ts";

export type {
  Rule,
  RuleContext,
  ValidationIssue,
} from "./validation_checks.ts";

/**
 * The checks upstream runs before the OS, metrics, logging and tracing
 * validators (those are in `validation_components.ts`): from
 * `nodeLeaseDurationSeconds` to `reservedMemory`.
 */
export const RULES: readonly Rule[] = [
  {
    field: "nodeLeaseDurationSeconds",
    check: ({ c }) =>
      c.nodeLeaseDurationSeconds <= 0
        ? `${IC}nodeLeaseDurationSeconds must be greater than 0`
        : undefined,
  },
  {
    field: "systemCgroups",
    check: ({ c }) =>
      c.systemCgroups && !c.cgroupRoot
        ? `${IC}systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified`
        : undefined,
  },
  negative("eventBurst", "event-burst", (c) => c.eventBurst),
  negative("eventRecordQPS", "event-qps", (c) => c.eventRecordQPS),
  {
    field: "healthzPort",
    check: ({ c }) =>
      c.healthzPort !== 0 && !between(c.healthzPort, 1, 65535)
        ? `${IC}healthzPort (--healthz-port) ${c.healthzPort} must be between 1 and 65535, inclusive`
        : undefined,
  },
  {
    field: "cpuCFSQuotaPeriod",
    check: ({ c, gate }) =>
      !gate("CustomCPUCFSQuotaPeriod") && ms(c.cpuCFSQuotaPeriod) !== 100
        ? `${IC}cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${
          metaDuration(c.cpuCFSQuotaPeriod)
        } requires feature gate CustomCPUCFSQuotaPeriod`
        : undefined,
  },
  {
    field: "cpuCFSQuotaPeriod",
    check: ({ c, gate }) =>
      gate("CustomCPUCFSQuotaPeriod") &&
        !between(ms(c.cpuCFSQuotaPeriod), 1, 1000)
        ? `${IC}cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${
          metaDuration(c.cpuCFSQuotaPeriod)
        } must be between 1ms and 1sec, inclusive`
        : undefined,
  },
  range(
    "imageGCHighThresholdPercent",
    "image-gc-high-threshold",
    [0, 100],
    (c) => c.imageGCHighThresholdPercent,
  ),
  range(
    "imageGCLowThresholdPercent",
    "image-gc-low-threshold",
    [0, 100],
    (c) => c.imageGCLowThresholdPercent,
  ),
  {
    field: "imageGCLowThresholdPercent",
    check: ({ c }) =>
      c.imageGCLowThresholdPercent >= c.imageGCHighThresholdPercent
        ? `${IC}imageGCLowThresholdPercent (--image-gc-low-threshold) ${c.imageGCLowThresholdPercent} must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ${c.imageGCHighThresholdPercent}`
        : undefined,
  },
  {
    field: "imageMaximumGCAge",
    check: ({ c, gate }) =>
      ms(c.imageMaximumGCAge) !== 0 && !gate("ImageMaximumGCAge")
        ? `${IC}ImageMaximumGCAge feature gate is required for Kubelet configuration option imageMaximumGCAge`
        : undefined,
  },
  {
    field: "imageMaximumGCAge",
    check: ({ c }) =>
      ms(c.imageMaximumGCAge) < 0
        ? `${IC}imageMaximumGCAge ${
          goDuration(c.imageMaximumGCAge)
        } must not be negative`
        : undefined,
  },
  {
    field: "imageMaximumGCAge",
    check: ({ c }) =>
      ms(c.imageMaximumGCAge) > 0 &&
        ms(c.imageMaximumGCAge) <= ms(c.imageMinimumGCAge)
        ? `${IC}imageMaximumGCAge ${
          goDuration(c.imageMaximumGCAge)
        } must be greater than imageMinimumGCAge ${
          goDuration(c.imageMinimumGCAge)
        }`
        : undefined,
  },
  range(
    "iptablesDropBit",
    "iptables-drop-bit",
    [0, 31],
    (c) => c.iptablesDropBit,
  ),
  range(
    "iptablesMasqueradeBit",
    "iptables-masquerade-bit",
    [0, 31],
    (c) => c.iptablesMasqueradeBit,
  ),
  negative("kubeAPIBurst", "kube-api-burst", (c) => c.kubeAPIBurst),
  negative("kubeAPIQPS", "kube-api-qps", (c) => c.kubeAPIQPS),
  {
    field: "nodeStatusMaxImages",
    check: ({ c }) =>
      c.nodeStatusMaxImages < -1
        ? `${IC}nodeStatusMaxImages (--node-status-max-images) ${c.nodeStatusMaxImages} must be -1 or greater`
        : undefined,
  },
  negative("maxOpenFiles", "max-open-files", (c) => c.maxOpenFiles),
  negative("maxPods", "max-pods", (c) => c.maxPods),
  range("oomScoreAdj", "oom-score-adj", [-1000, 1000], (c) => c.oomScoreAdj),
  negative("podsPerCore", "pods-per-core", (c) => c.podsPerCore),
  range("port", "port", [1, 65535], (c) => c.port),
  {
    field: "readOnlyPort",
    check: ({ c }) =>
      (c.readOnlyPort ?? 0) !== 0 && !between(c.readOnlyPort ?? 0, 1, 65535)
        ? `${IC}readOnlyPort (--read-only-port) ${c.readOnlyPort} must be between 0 and 65535, inclusive`
        : undefined,
  },
  negative("registryBurst", "registry-burst", (c) => c.registryBurst),
  negative("registryPullQPS", "registry-qps", (c) => c.registryPullQPS),
  {
    field: "maxParallelImagePulls",
    check: ({ c }) =>
      c.maxParallelImagePulls !== undefined && c.maxParallelImagePulls < 1
        ? `${IC}maxParallelImagePulls ${c.maxParallelImagePulls} must be a positive number`
        : undefined,
  },
  {
    field: "maxParallelImagePulls",
    check: ({ c }) =>
      c.serializeImagePulls && c.maxParallelImagePulls !== undefined &&
        c.maxParallelImagePulls > 1
        ? `${IC}maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false`
        : undefined,
  },
  {
    field: "serverTLSBootstrap",
    check: ({ c, gate }) =>
      c.serverTLSBootstrap && !gate("RotateKubeletServerCertificate")
        ? `${IC}serverTLSBootstrap true requires feature gate RotateKubeletServerCertificate`
        : undefined,
  },
  {
    field: "runOnce",
    check: ({ c }) =>
      c.runOnce
        ? `${IC}runOnce (--runOnce) true, Runonce mode has been deprecated and should not be set`
        : undefined,
  },
  {
    field: "registerWithTaints",
    check: ({ c }) => taintProblems(c.registerWithTaints ?? []),
  },
  {
    field: "topologyManagerPolicy",
    check: ({ c }) =>
      ["none", "best-effort", "restricted", "single-numa-node"].includes(
          c.topologyManagerPolicy,
        )
        ? undefined
        : `${IC}topologyManagerPolicy (--topology-manager-policy) ${
          q(c.topologyManagerPolicy)
        } must be one of: ["none" "best-effort" "restricted" "single-numa-node"]`,
  },
  {
    field: "topologyManagerScope",
    check: ({ c }) =>
      ["container", "pod"].includes(c.topologyManagerScope)
        ? undefined
        : `${IC}topologyManagerScope (--topology-manager-scope) ${
          q(c.topologyManagerScope)
        } must be one of: "container", or "pod"`,
  },
  { field: "shutdownGracePeriod", check: shutdown },
  {
    field: "memorySwap.swapBehavior",
    check: ({ c, gate }) => {
      const behavior = c.memorySwap.swapBehavior ?? "";
      if (gate("NodeSwap")) {
        return ["", "NoSwap", "LimitedSwap"].includes(behavior)
          ? undefined
          : `${IC}memorySwap.swapBehavior ${
            q(behavior)
          } must be one of: "", "LimitedSwap" or "NoSwap"`;
      }
      return behavior !== ""
        ? `${IC}memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled`
        : undefined;
    },
  },
  {
    field: "crashLoopBackOff.maxContainerRestartPeriod",
    check: crashLoopBackOff,
  },
  { field: "enforceNodeAllocatable", check: enforceNodeAllocatable },
  {
    field: "hairpinMode",
    check: ({ c }) =>
      ["none", "hairpin-veth", "promiscuous-bridge"].includes(c.hairpinMode)
        ? undefined
        : `${IC}option ${
          q(c.hairpinMode)
        } specified for hairpinMode (--hairpin-mode). Valid options are "none", "hairpin-veth" or "promiscuous-bridge"`,
  },
  {
    field: "imagePullCredentialsVerificationPolicy",
    check: imagePullCredentials,
  },
  {
    field: "reservedSystemCPUs",
    check: ({ c }) =>
      c.reservedSystemCPUs && (c.systemReservedCgroup || c.kubeReservedCgroup)
        ? `${IC}can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)`
        : undefined,
  },
  {
    field: "reservedSystemCPUs",
    check: ({ c }) => {
      const problem = cpusetProblem(c.reservedSystemCPUs ?? "");
      return problem
        ? `${IC}unable to parse reservedSystemCPUs (--reserved-cpus) ${c.reservedSystemCPUs}, error: ${problem}`
        : undefined;
    },
  },
  { field: "reservedMemory", check: reservedMemory },
];

/**
 * The checks upstream runs after the logging and tracing validators: from
 * `memoryThrottlingFactor` to `podLogsDir`.
 */
export const LATE_RULES: readonly Rule[] = [
  {
    field: "memoryThrottlingFactor",
    check: ({ c, gate }) =>
      gate("MemoryQoS") &&
        (c.memoryThrottlingFactor as number | undefined) === undefined
        ? `${IC}memoryThrottlingFactor is required when MemoryQoS feature flag is enabled`
        : undefined,
  },
  {
    field: "memoryThrottlingFactor",
    check: ({ c }) =>
      c.memoryThrottlingFactor !== undefined &&
        (c.memoryThrottlingFactor <= 0 || c.memoryThrottlingFactor > 1)
        ? `${IC}memoryThrottlingFactor ${c.memoryThrottlingFactor} must be greater than 0 and less than or equal to 1.0`
        : undefined,
  },
  {
    field: "containerRuntimeEndpoint",
    check: ({ c }) =>
      c.containerRuntimeEndpoint === ""
        ? `${IC}the containerRuntimeEndpoint was not specified or empty`
        : undefined,
  },
  {
    field: "enableSystemLogQuery",
    check: ({ c, gate }) =>
      c.enableSystemLogQuery && !gate("NodeLogQuery")
        ? `${IC}NodeLogQuery feature gate is required for enableSystemLogHandler`
        : undefined,
  },
  {
    field: "enableSystemLogQuery",
    check: ({ c }) =>
      c.enableSystemLogQuery && !c.enableSystemLogHandler
        ? `${IC}enableSystemLogHandler is required for enableSystemLogQuery`
        : undefined,
  },
  {
    field: "containerLogMaxWorkers",
    check: ({ c }) =>
      c.containerLogMaxWorkers < 1
        ? `${IC}containerLogMaxWorkers must be greater than or equal to 1`
        : undefined,
  },
  {
    field: "containerLogMonitorInterval",
    check: ({ c }) =>
      ms(c.containerLogMonitorInterval) < 3000
        ? `${IC}containerLogMonitorInterval must be a positive time duration greater than or equal to 3s`
        : undefined,
  },
  {
    field: "containerLogMaxFiles",
    check: ({ c }) =>
      c.containerLogMaxFiles <= 1
        ? `${IC}containerLogMaxFiles must be greater than 1`
        : undefined,
  },
  { field: "podLogsDir", check: podLogsDir },
];
