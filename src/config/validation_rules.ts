/**
 * The rules of `ValidateKubeletConfiguration` (kubelet-config.md section 4)
 * as data: one entry per rule, in upstream order, each returning zero or
 * more messages in upstream wording.
 * @module
 */
import { parseQuantity } from "../util/quantity.ts";
import type { KubeletConfiguration } from "./schema.ts";
import {
  cleanPath,
  cpusetProblem,
  goDuration,
  imagePatternProblem,
  metaDuration,
  ms,
  q,
} from "./validation_support.ts";
import { taintProblems } from "./validation_taints.ts";

/** One validation finding: the field path and the upstream message. */
export interface ValidationIssue {
  field: string;
  message: string;
}

/** What a rule sees. */
export interface RuleContext {
  readonly c: KubeletConfiguration;
  gate(name: string): boolean;
}

/** A rule: a message (or list of messages) when violated, else nothing. */
export interface Rule {
  readonly id: string;
  readonly field: string;
  check(ctx: RuleContext): string | string[] | ValidationIssue[] | undefined;
}

const IC = "invalid configuration: ";

function isZeroQuantity(text: string): boolean {
  try {
    return parseQuantity(text).value === 0;
  } catch {
    return false;
  }
}

function between(v: number, lo: number, hi: number): boolean {
  return v >= lo && v <= hi;
}

function negative(
  field: string,
  flag: string,
  get: (c: KubeletConfiguration) => number | undefined,
): Rule {
  return {
    id: field,
    field,
    check: ({ c }) => {
      const v = get(c) ?? 0;
      return v < 0
        ? `${IC}${field} (--${flag}) ${v} must not be a negative number`
        : undefined;
    },
  };
}

function range(
  field: string,
  flag: string,
  bounds: [number, number],
  get: (c: KubeletConfiguration) => number | undefined,
): Rule {
  return {
    id: field,
    field,
    check: ({ c }) => {
      const v = get(c) ?? 0;
      return between(v, bounds[0], bounds[1])
        ? undefined
        : `${IC}${field} (--${flag}) ${v} must be between ${bounds[0]} and ${
          bounds[1]
        }, inclusive`;
    },
  };
}

const ENFORCEMENTS = [
  "pods",
  "system-reserved",
  "system-reserved-compressible",
  "kube-reserved",
  "kube-reserved-compressible",
  "none",
];
const ENA = "enforceNodeAllocatable (--enforce-node-allocatable)";

function enforceNodeAllocatable({ c }: RuleContext): string[] {
  const list = c.enforceNodeAllocatable;
  const out: string[] = [];
  const pair = (a: string, b: string) => {
    if (list.includes(a) && list.includes(b)) {
      out.push(
        `${IC}both ${q(a)} and ${q(b)} cannot be specified together in ${ENA}`,
      );
    }
  };
  pair("system-reserved", "system-reserved-compressible");
  pair("kube-reserved", "kube-reserved-compressible");
  const seen = new Set<string>();
  for (const val of list) {
    if (seen.has(val)) {
      out.push(`${IC}duplicated enforcements ${q(val)} in ${ENA}`);
      continue;
    }
    seen.add(val);
    if (
      val.startsWith("system-reserved") && ENFORCEMENTS.includes(val) &&
      !c.systemReservedCgroup
    ) {
      out.push(
        `${IC}systemReservedCgroup (--system-reserved-cgroup) must be specified when "system-reserved" or "system-reserved-compressible" included in ${ENA}`,
      );
    }
    if (
      val.startsWith("kube-reserved") && ENFORCEMENTS.includes(val) &&
      !c.kubeReservedCgroup
    ) {
      out.push(
        `${IC}kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "kube-reserved" or "kube-reserved-compressible" included in ${ENA}`,
      );
    }
    if (val === "none") {
      if (list.length > 1) {
        out.push(
          `${IC}${ENA} may not contain additional enforcements when "none" is specified`,
        );
      }
      continue;
    }
    if (!ENFORCEMENTS.includes(val)) {
      out.push(
        `${IC}option ${q(val)} specified for ${ENA}. Valid options are ${
          ENFORCEMENTS.slice(0, 5).map(q).join(", ")
        } or "none"`,
      );
      continue;
    }
    if (!c.cgroupsPerQOS) {
      out.push(
        `${IC}cgroupsPerQOS (--cgroups-per-qos) must be set to true when ${
          q(val)
        } contained in ${ENA}`,
      );
    }
  }
  return out;
}

const PULL_POLICIES = [
  "NeverVerify",
  "NeverVerifyPreloadedImages",
  "NeverVerifyAllowlistedImages",
  "AlwaysVerify",
];

function imagePullCredentials({ c, gate }: RuleContext): string[] {
  const policy = c.imagePullCredentialsVerificationPolicy ?? "";
  const allowlist = c.preloadedImagesVerificationAllowlist ?? [];
  const out: string[] = [];
  if (gate("KubeletEnsureSecretPulledImages")) {
    if (!PULL_POLICIES.includes(policy)) {
      out.push(
        `${IC}option ${
          q(policy)
        } specified for imagePullCredentialsVerificationPolicy. Valid options are "NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"`,
      );
    }
    if (allowlist.length > 0 && policy !== "NeverVerifyAllowlistedImages") {
      out.push(
        `${IC}can't set \`preloadedImagesVerificationAllowlist\` if \`imagePullCredentialsVertificationPolicy\` is not "NeverVerifyAllowlistedImages"`,
      );
    } else {
      for (const pattern of allowlist) {
        const problem = imagePatternProblem(pattern);
        if (problem) {
          out.push(
            `${IC}invalid image pattern in \`preloadedImagesVerificationAllowlist\`: ${problem}`,
          );
          break;
        }
      }
    }
    return out;
  }
  if (policy !== "") {
    out.push(
      `${IC}\`imagePullCredentialsVerificationPolicy\` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled`,
    );
  }
  if (allowlist.length > 0) {
    out.push(
      `${IC}\`preloadedImagesVerificationAllowlist\` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled`,
    );
  }
  return out;
}

function podLogsDir({ c }: RuleContext): string[] {
  const dir = c.podLogsDir;
  const out: string[] = [];
  if (dir === "") out.push(`${IC}podLogsDir was not specified`);
  if (!dir.startsWith("/")) {
    out.push(`${IC}pod logs path ${q(dir)} must be absolute path`);
  }
  if (cleanPath(dir) !== dir) {
    out.push(`${IC}pod logs path ${q(dir)} must be normalized`);
  }
  if ([...dir].some((ch) => (ch.codePointAt(0) ?? 0) > 127)) {
    out.push(`${IC}pod logs path ${q(dir)} mut contains ASCII characters only`);
  }
  return out;
}

function crashLoopBackOff({ c, gate }: RuleContext): string | undefined {
  const max = c.crashLoopBackOff.maxContainerRestartPeriod;
  if (!gate("KubeletCrashLoopBackOffMax")) {
    return max === undefined
      ? undefined
      : `${IC}FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set`;
  }
  if (max === undefined) {
    return `${IC}FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set`;
  }
  const millis = Math.trunc(ms(max));
  return between(millis, 1000, 300000)
    ? undefined
    : `${IC}CrashLoopBackOff.MaxContainerRestartPeriod (got: ${
      ms(max) / 1000
    } seconds) must be set between 1s and 300s`;
}

function shutdown({ c, gate }: RuleContext): string[] {
  const period = ms(c.shutdownGracePeriod);
  const critical = ms(c.shutdownGracePeriodCriticalPods);
  const byPriority = c.shutdownGracePeriodByPodPriority ?? [];
  const out: string[] = [];
  if (gate("GracefulNodeShutdown")) {
    if (critical > period) {
      out.push(
        `${IC}shutdownGracePeriodCriticalPods ${
          metaDuration(c.shutdownGracePeriodCriticalPods)
        } must be <= shutdownGracePeriod ${
          metaDuration(c.shutdownGracePeriod)
        }`,
      );
    }
    if (period < 0 || (period > 0 && period < 1000)) {
      out.push(
        `${IC}shutdownGracePeriod ${
          metaDuration(c.shutdownGracePeriod)
        } must be either zero or otherwise >= 1 sec`,
      );
    }
    if (critical < 0 || (critical > 0 && critical < 1000)) {
      out.push(
        `${IC}shutdownGracePeriodCriticalPods ${
          metaDuration(c.shutdownGracePeriodCriticalPods)
        } must be either zero or otherwise >= 1 sec`,
      );
    }
  }
  if ((period > 0 || critical > 0) && !gate("GracefulNodeShutdown")) {
    out.push(
      `${IC}specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown`,
    );
  }
  if (
    gate("GracefulNodeShutdownBasedOnPodPriority") && byPriority.length > 0 &&
    (period > 0 || critical > 0)
  ) {
    out.push(
      `${IC}Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time`,
    );
  }
  if (
    !gate("GracefulNodeShutdownBasedOnPodPriority") && byPriority.length > 0
  ) {
    out.push(
      `${IC}Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority`,
    );
  }
  return out;
}

function reservedMemory({ c }: RuleContext): string[] {
  const out: string[] = [];
  const seen = new Map<number, Set<string>>();
  for (const entry of c.reservedMemory ?? []) {
    const node = entry.numaNode;
    const names = seen.get(node) ?? new Set<string>();
    seen.set(node, names);
    for (const name of Object.keys(entry.limits).sort()) {
      if (name !== "memory" && !name.startsWith("hugepages-")) {
        out.push(
          `${IC}the limit type ${
            q(name)
          } for NUMA node ${node} is not supported, only [memory hugepages-<HugePageSize>] is accepted`,
        );
      }
      if (names.has(name)) {
        out.push(
          `${IC}the reserved memory has a duplicate value for NUMA node ${node} and resource ${
            q(name)
          }`,
        );
      } else names.add(name);
      if (isZeroQuantity(entry.limits[name] ?? "0")) {
        out.push(
          `${IC}reserved memory may not be zero for NUMA node ${node} and resource ${
            q(name)
          }`,
        );
      }
    }
  }
  return out;
}

/** Rules V1–V64 and V69–V80 (logging, tracing and OS rules live elsewhere). */
export const RULES: readonly Rule[] = [
  {
    id: "V1",
    field: "nodeLeaseDurationSeconds",
    check: ({ c }) =>
      c.nodeLeaseDurationSeconds <= 0
        ? `${IC}nodeLeaseDurationSeconds must be greater than 0`
        : undefined,
  },
  {
    id: "V2",
    field: "systemCgroups",
    check: ({ c }) =>
      c.systemCgroups && !c.cgroupRoot
        ? `${IC}systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified`
        : undefined,
  },
  negative("eventBurst", "event-burst", (c) => c.eventBurst),
  negative("eventRecordQPS", "event-qps", (c) => c.eventRecordQPS),
  {
    id: "V5",
    field: "healthzPort",
    check: ({ c }) =>
      c.healthzPort !== 0 && !between(c.healthzPort, 1, 65535)
        ? `${IC}healthzPort (--healthz-port) ${c.healthzPort} must be between 1 and 65535, inclusive`
        : undefined,
  },
  {
    id: "V6",
    field: "cpuCFSQuotaPeriod",
    check: ({ c, gate }) =>
      !gate("CustomCPUCFSQuotaPeriod") && ms(c.cpuCFSQuotaPeriod) !== 100
        ? `${IC}cpuCFSQuotaPeriod (--cpu-cfs-quota-period) ${
          metaDuration(c.cpuCFSQuotaPeriod)
        } requires feature gate CustomCPUCFSQuotaPeriod`
        : undefined,
  },
  {
    id: "V7",
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
    id: "V10",
    field: "imageGCLowThresholdPercent",
    check: ({ c }) =>
      c.imageGCLowThresholdPercent >= c.imageGCHighThresholdPercent
        ? `${IC}imageGCLowThresholdPercent (--image-gc-low-threshold) ${c.imageGCLowThresholdPercent} must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ${c.imageGCHighThresholdPercent}`
        : undefined,
  },
  {
    id: "V11",
    field: "imageMaximumGCAge",
    check: ({ c, gate }) =>
      ms(c.imageMaximumGCAge) !== 0 && !gate("ImageMaximumGCAge")
        ? `${IC}ImageMaximumGCAge feature gate is required for Kubelet configuration option imageMaximumGCAge`
        : undefined,
  },
  {
    id: "V12",
    field: "imageMaximumGCAge",
    check: ({ c }) =>
      ms(c.imageMaximumGCAge) < 0
        ? `${IC}imageMaximumGCAge ${
          goDuration(c.imageMaximumGCAge)
        } must not be negative`
        : undefined,
  },
  {
    id: "V13",
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
    id: "V18",
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
    id: "V24",
    field: "readOnlyPort",
    check: ({ c }) =>
      (c.readOnlyPort ?? 0) !== 0 && !between(c.readOnlyPort ?? 0, 1, 65535)
        ? `${IC}readOnlyPort (--read-only-port) ${c.readOnlyPort} must be between 0 and 65535, inclusive`
        : undefined,
  },
  negative("registryBurst", "registry-burst", (c) => c.registryBurst),
  negative("registryPullQPS", "registry-qps", (c) => c.registryPullQPS),
  {
    id: "V27",
    field: "maxParallelImagePulls",
    check: ({ c }) =>
      c.maxParallelImagePulls !== undefined && c.maxParallelImagePulls < 1
        ? `${IC}maxParallelImagePulls ${c.maxParallelImagePulls} must be a positive number`
        : undefined,
  },
  {
    id: "V28",
    field: "maxParallelImagePulls",
    check: ({ c }) =>
      c.serializeImagePulls && c.maxParallelImagePulls !== undefined &&
        c.maxParallelImagePulls > 1
        ? `${IC}maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false`
        : undefined,
  },
  {
    id: "V29",
    field: "serverTLSBootstrap",
    check: ({ c, gate }) =>
      c.serverTLSBootstrap && !gate("RotateKubeletServerCertificate")
        ? `${IC}serverTLSBootstrap true requires feature gate RotateKubeletServerCertificate`
        : undefined,
  },
  {
    id: "V30",
    field: "runOnce",
    check: ({ c }) =>
      c.runOnce
        ? `${IC}runOnce (--runOnce) true, Runonce mode has been deprecated and should not be set`
        : undefined,
  },
  {
    id: "V31",
    field: "registerWithTaints",
    check: ({ c }) => taintProblems(c.registerWithTaints ?? []),
  },
  {
    id: "V33",
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
    id: "V34",
    field: "topologyManagerScope",
    check: ({ c }) =>
      ["container", "pod"].includes(c.topologyManagerScope)
        ? undefined
        : `${IC}topologyManagerScope (--topology-manager-scope) ${
          q(c.topologyManagerScope)
        } must be one of: "container", or "pod"`,
  },
  { id: "V35", field: "shutdownGracePeriod", check: shutdown },
  {
    id: "V41",
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
    id: "V43",
    field: "crashLoopBackOff.maxContainerRestartPeriod",
    check: crashLoopBackOff,
  },
  { id: "V46", field: "enforceNodeAllocatable", check: enforceNodeAllocatable },
  {
    id: "V54",
    field: "hairpinMode",
    check: ({ c }) =>
      ["none", "hairpin-veth", "promiscuous-bridge"].includes(c.hairpinMode)
        ? undefined
        : `${IC}option ${
          q(c.hairpinMode)
        } specified for hairpinMode (--hairpin-mode). Valid options are "none", "hairpin-veth" or "promiscuous-bridge"`,
  },
  {
    id: "V55",
    field: "imagePullCredentialsVerificationPolicy",
    check: imagePullCredentials,
  },
  {
    id: "V60",
    field: "reservedSystemCPUs",
    check: ({ c }) =>
      c.reservedSystemCPUs && (c.systemReservedCgroup || c.kubeReservedCgroup)
        ? `${IC}can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)`
        : undefined,
  },
  {
    id: "V61",
    field: "reservedSystemCPUs",
    check: ({ c }) => {
      const problem = cpusetProblem(c.reservedSystemCPUs ?? "");
      return problem
        ? `${IC}unable to parse reservedSystemCPUs (--reserved-cpus) ${c.reservedSystemCPUs}, error: ${problem}`
        : undefined;
    },
  },
  { id: "V62", field: "reservedMemory", check: reservedMemory },
];

/** Rules V69–V80, which upstream runs after logging and tracing. */
export const LATE_RULES: readonly Rule[] = [
  {
    id: "V69",
    field: "memoryThrottlingFactor",
    check: ({ c, gate }) =>
      gate("MemoryQoS") &&
        (c.memoryThrottlingFactor as number | undefined) === undefined
        ? `${IC}memoryThrottlingFactor is required when MemoryQoS feature flag is enabled`
        : undefined,
  },
  {
    id: "V70",
    field: "memoryThrottlingFactor",
    check: ({ c }) =>
      c.memoryThrottlingFactor !== undefined &&
        (c.memoryThrottlingFactor <= 0 || c.memoryThrottlingFactor > 1)
        ? `${IC}memoryThrottlingFactor ${c.memoryThrottlingFactor} must be greater than 0 and less than or equal to 1.0`
        : undefined,
  },
  {
    id: "V71",
    field: "containerRuntimeEndpoint",
    check: ({ c }) =>
      c.containerRuntimeEndpoint === ""
        ? `${IC}the containerRuntimeEndpoint was not specified or empty`
        : undefined,
  },
  {
    id: "V72",
    field: "enableSystemLogQuery",
    check: ({ c, gate }) =>
      c.enableSystemLogQuery && !gate("NodeLogQuery")
        ? `${IC}NodeLogQuery feature gate is required for enableSystemLogHandler`
        : undefined,
  },
  {
    id: "V73",
    field: "enableSystemLogQuery",
    check: ({ c }) =>
      c.enableSystemLogQuery && !c.enableSystemLogHandler
        ? `${IC}enableSystemLogHandler is required for enableSystemLogQuery`
        : undefined,
  },
  {
    id: "V74",
    field: "containerLogMaxWorkers",
    check: ({ c }) =>
      c.containerLogMaxWorkers < 1
        ? `${IC}containerLogMaxWorkers must be greater than or equal to 1`
        : undefined,
  },
  {
    id: "V75",
    field: "containerLogMonitorInterval",
    check: ({ c }) =>
      ms(c.containerLogMonitorInterval) < 3000
        ? `${IC}containerLogMonitorInterval must be a positive time duration greater than or equal to 3s`
        : undefined,
  },
  {
    id: "V76",
    field: "containerLogMaxFiles",
    check: ({ c }) =>
      c.containerLogMaxFiles <= 1
        ? `${IC}containerLogMaxFiles must be greater than 1`
        : undefined,
  },
  { id: "V77", field: "podLogsDir", check: podLogsDir },
];
