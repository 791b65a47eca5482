/**
 * Settings upstream acts on and this kubelet accepts without carrying them out. Upstream would
 * start with them and behave differently, so each is a start-up warning naming the setting,
 * never silence.
 * @module
 */
import {
  defaultKubeletConfiguration,
  type KubeletConfiguration,
} from "../config/mod.ts";

/**
 * Fields accepted, defaulted and validated, that no part of this kubelet reads: a value other
 * than the default warns. (What their defaults mean upstream is in docs/differences.md.)
 */
export const NOT_CARRIED_OUT: readonly (keyof KubeletConfiguration)[] = [
  "registryPullQPS",
  "registryBurst",
  "imagePullCredentialsVerificationPolicy",
  "preloadedImagesVerificationAllowlist",
  "enableContentionProfiling",
  "streamingConnectionIdleTimeout",
  "volumeStatsAggPeriod",
  "kubeletCgroups",
  "systemCgroups",
  "cpuManagerPolicyOptions",
  "cpuManagerReconcilePeriod",
  "topologyManagerScope",
  "topologyManagerPolicyOptions",
  "qosReserved",
  "hairpinMode",
  "podCIDR",
  "cpuCFSQuota",
  "cpuCFSQuotaPeriod",
  "maxOpenFiles",
  "contentType",
  "podsPerCore",
  "protectKernelDefaults",
  "makeIPTablesUtilChains",
  "iptablesMasqueradeBit",
  "iptablesDropBit",
  "failSwapOn",
  "reservedSystemCPUs",
  "showHiddenMetricsForVersion",
  "volumePluginDir",
  "kernelMemcgNotification",
  "crashLoopBackOff",
  "reservedMemory",
  "enableProfilingHandler",
  "enableDebugFlagsHandler",
  "memoryThrottlingFactor",
  "localStorageCapacityIsolation",
  "tracing",
];

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** One warning per {@linkcode NOT_CARRIED_OUT} field set away from its default. */
export function changedIgnoredSettings(config: KubeletConfiguration): string[] {
  const defaults = defaultKubeletConfiguration();
  return NOT_CARRIED_OUT.filter((field) =>
    !sameValue(config[field], defaults[field])
  ).map((field) =>
    `${field}: set to ${
      JSON.stringify(config[field])
    }, but kubelet.ts does not read this setting: it behaves as ${
      defaults[field] === undefined
        ? "when it is unset"
        : `with the default ${JSON.stringify(defaults[field])}`
    }`
  );
}

type Settings = Pick<
  KubeletConfiguration,
  | "cpuManagerPolicy"
  | "memoryManagerPolicy"
  | "topologyManagerPolicy"
  | "memorySwap"
>;

/** One warning per setting not carried out, `<field>: <what happens instead>`. */
export function unhonouredSettings(config: Settings): string[] {
  const warnings: string[] = [];
  if (config.cpuManagerPolicy && config.cpuManagerPolicy !== "none") {
    warnings.push(
      `cpuManagerPolicy: "${config.cpuManagerPolicy}" is not carried out (kubelet.ts has no CPU manager): containers get no exclusive CPUs, as with "none"`,
    );
  }
  if (config.memoryManagerPolicy && config.memoryManagerPolicy !== "None") {
    warnings.push(
      `memoryManagerPolicy: "${config.memoryManagerPolicy}" is not carried out (kubelet.ts has no memory manager): containers get no NUMA memory pinning, as with "None"`,
    );
  }
  if (config.topologyManagerPolicy && config.topologyManagerPolicy !== "none") {
    warnings.push(
      `topologyManagerPolicy: "${config.topologyManagerPolicy}" is not carried out (kubelet.ts has no topology manager): pods are admitted without NUMA alignment, as with "none"`,
    );
  }
  if (config.memorySwap?.swapBehavior === "LimitedSwap") {
    warnings.push(
      'memorySwap.swapBehavior: "LimitedSwap" is not carried out: containers get no swap limit, as with "NoSwap"',
    );
  }
  return warnings;
}
