/**
 * v1beta1 `SetDefaults_KubeletConfiguration`
 * (pkg/kubelet/apis/config/v1beta1/defaults.go)
 * over the JSON shape: pointer fields are defaulted when absent, value
 * fields also when they hold Go's zero value.
 * @module
 */
import { createFeatureGates, type FeatureGates } from "../features/mod.ts";
import { parseGoDuration } from "../util/go_duration.ts";
import {
  canonicalizeDurations,
  checkConfigTypes,
  isDurationPath,
} from "./check_types.ts";
import { KUBELET_CONFIG_API_VERSION, KUBELET_CONFIG_KIND } from "./envelope.ts";
import { ConfigError } from "./errors.ts";
import type { KubeletConfiguration } from "./schema.ts";

type Json = Record<string, unknown>;

/** `ptr`: only absent counts as unset; `value`: Go's zero value does too. */
type Kind = "ptr" | "value";

/** Default table: [json path, kind, default], applied in this order. */
const DEFAULTS: ReadonlyArray<readonly [string, Kind, unknown]> = [
  ["enableServer", "ptr", true],
  ["syncFrequency", "value", "1m0s"],
  ["fileCheckFrequency", "value", "20s"],
  ["httpCheckFrequency", "value", "20s"],
  ["address", "value", "0.0.0.0"],
  ["port", "value", 10250],
  ["authentication.anonymous.enabled", "ptr", false],
  ["authentication.webhook.enabled", "ptr", true],
  ["authentication.webhook.cacheTTL", "value", "2m0s"],
  ["authorization.mode", "value", "Webhook"],
  ["authorization.webhook.cacheAuthorizedTTL", "value", "5m0s"],
  ["authorization.webhook.cacheUnauthorizedTTL", "value", "30s"],
  ["registryPullQPS", "ptr", 5],
  ["registryBurst", "value", 10],
  ["eventRecordQPS", "ptr", 50],
  ["eventBurst", "value", 100],
  ["enableDebuggingHandlers", "ptr", true],
  ["healthzPort", "ptr", 10248],
  ["healthzBindAddress", "value", "127.0.0.1"],
  ["oomScoreAdj", "ptr", -999],
  ["streamingConnectionIdleTimeout", "value", "4h0m0s"],
  // nodeStatusReportFrequency is handled before this table (it reads the
  // update frequency as given).
  ["nodeStatusUpdateFrequency", "value", "10s"],
  ["nodeLeaseDurationSeconds", "value", 40],
  ["imageMinimumGCAge", "value", "2m0s"],
  ["imageMaximumGCAge", "value", "0s"],
  ["imageGCHighThresholdPercent", "ptr", 85],
  ["imageGCLowThresholdPercent", "ptr", 80],
  ["volumeStatsAggPeriod", "value", "1m0s"],
  ["cgroupsPerQOS", "ptr", true],
  ["cgroupDriver", "value", "cgroupfs"],
  ["cpuManagerPolicy", "value", "none"],
  ["cpuManagerReconcilePeriod", "value", "10s"],
  ["memoryManagerPolicy", "value", "None"],
  ["topologyManagerPolicy", "value", "none"],
  ["topologyManagerScope", "value", "container"],
  ["runtimeRequestTimeout", "value", "2m0s"],
  ["hairpinMode", "value", "promiscuous-bridge"],
  ["maxPods", "value", 110],
  ["resolvConf", "ptr", "/etc/resolv.conf"],
  ["cpuCFSQuota", "ptr", true],
  ["cpuCFSQuotaPeriod", "ptr", "100ms"],
  ["nodeStatusMaxImages", "ptr", 50],
  ["maxOpenFiles", "value", 1000000],
  ["contentType", "value", "application/vnd.kubernetes.protobuf"],
  ["kubeAPIQPS", "ptr", 50],
  ["kubeAPIBurst", "value", 100],
  ["evictionPressureTransitionPeriod", "value", "5m0s"],
  ["mergeDefaultEvictionSettings", "ptr", false],
  ["enableControllerAttachDetach", "ptr", true],
  ["makeIPTablesUtilChains", "ptr", true],
  ["iptablesMasqueradeBit", "ptr", 14],
  ["iptablesDropBit", "ptr", 15],
  ["failSwapOn", "ptr", true],
  ["containerLogMaxSize", "value", "10Mi"],
  ["containerLogMaxFiles", "ptr", 5],
  ["containerLogMaxWorkers", "ptr", 1],
  ["containerLogMonitorInterval", "ptr", "10s"],
  ["configMapAndSecretChangeDetectionStrategy", "value", "Watch"],
  ["enforceNodeAllocatable", "ptr", ["pods"]],
  [
    "volumePluginDir",
    "value",
    "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/",
  ],
  ["podLogsDir", "value", "/var/log/pods"],
  ["enableSystemLogHandler", "ptr", true],
  ["enableSystemLogQuery", "ptr", false],
  ["shutdownGracePeriod", "value", "0s"],
  ["shutdownGracePeriodCriticalPods", "value", "0s"],
  ["enableProfilingHandler", "ptr", true],
  ["enableDebugFlagsHandler", "ptr", true],
  ["seccompDefault", "ptr", false],
  ["memoryThrottlingFactor", "ptr", 0.9],
  ["registerNode", "ptr", true],
  ["localStorageCapacityIsolation", "ptr", true],
  [
    "containerRuntimeEndpoint",
    "value",
    "unix:///run/containerd/containerd.sock",
  ],
  ["failCgroupV1", "ptr", false],
  ["logging.format", "value", "text"],
  ["logging.flushFrequency", "value", "5s"],
  ["logging.verbosity", "ptr", 0],
  ["logging.options.text.infoBufferSize", "ptr", "0"],
  ["logging.options.json.infoBufferSize", "ptr", "0"],
];

/** Structs that are always present (possibly empty) after defaulting. */
const ALWAYS_PRESENT = [
  "authentication.x509",
  "memorySwap",
  "crashLoopBackOff",
];

function isZero(value: unknown, duration = false): boolean {
  if (value === undefined || value === null) return true;
  if (value === 0 || value === "") return true;
  if (duration && typeof value === "string") {
    try {
      return parseGoDuration(value) === 0;
    } catch {
      return false;
    }
  }
  return false;
}

/** Drops keys whose value is `null` (recursively), like Go's decode of null. */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== null) out[k] = dropNulls(v);
    }
    return out;
  }
  return value;
}

function parentOf(doc: Json, path: string): [Json, string] {
  const parts = path.split(".");
  let node = doc;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (next === undefined || next === null || typeof next !== "object") {
      node[part] = {};
    }
    node = node[part] as Json;
  }
  return [node, parts[parts.length - 1] as string];
}

function gatesFor(doc: Json, base: FeatureGates | undefined): FeatureGates {
  const gates = (base ?? createFeatureGates()).clone();
  const fromDoc = doc.featureGates;
  if (fromDoc && typeof fromDoc === "object") {
    try {
      gates.setFromMap(fromDoc as Record<string, boolean>);
    } catch (err) {
      throw new ConfigError((err as Error).message, {
        field: "featureGates",
        cause: err,
      });
    }
  }
  return gates;
}

/** Options for applyKubeletConfigurationDefaults. */
export interface DefaultsOptions {
  /** The process-wide gates (from flags); the document's gates go on top. */
  featureGates?: FeatureGates;
}

/**
 * Applies v1beta1 defaults to a decoded document (not modified) and
 * resolves to the defaulted configuration. Unknown fields are dropped.
 * Rejects with ConfigError for a field of the wrong type, and for an
 * unknown or locked feature gate in `featureGates` (upstream panics).
 */
export function applyKubeletConfigurationDefaults(
  doc: Record<string, unknown>,
  options: DefaultsOptions = {},
): Promise<KubeletConfiguration> {
  // The executor turns a thrown ConfigError into a rejection.
  return new Promise((resolve) =>
    resolve(defaultCheckedDocument(checkConfigTypes(doc).doc, options))
  );
}

/** Defaults for a fixed, known-good document. */
function defaultsOf(doc: Record<string, unknown>): KubeletConfiguration {
  return defaultCheckedDocument(checkConfigTypes(doc).doc);
}

/**
 * applyKubeletConfigurationDefaults for a document that already passed
 * `checkConfigTypes` (a fresh copy owned by the caller; modified).
 */
export function defaultCheckedDocument(
  checked: Record<string, unknown>,
  options: DefaultsOptions = {},
): KubeletConfiguration {
  const out = dropNulls(checked) as Json;
  const gates = gatesFor(out, options.featureGates);
  out.apiVersion ??= KUBELET_CONFIG_API_VERSION;
  out.kind ??= KUBELET_CONFIG_KIND;
  if (isZero(out.nodeStatusReportFrequency, true)) {
    out.nodeStatusReportFrequency = isZero(out.nodeStatusUpdateFrequency, true)
      ? "5m0s"
      : out.nodeStatusUpdateFrequency;
  }
  for (const path of ALWAYS_PRESENT) {
    const [parent, key] = parentOf(out, path);
    parent[key] ??= {};
  }
  for (const [path, kind, value] of DEFAULTS) {
    const [parent, key] = parentOf(out, path);
    const unset = kind === "ptr"
      ? parent[key] === undefined
      : isZero(parent[key], isDurationPath(path));
    if (unset) parent[key] = structuredClone(value);
  }
  if (typeof out.podPidsLimit !== "number" || out.podPidsLimit < 0) {
    out.podPidsLimit = -1;
  }
  if (out.serializeImagePulls === undefined) {
    const parallel = out.maxParallelImagePulls;
    out.serializeImagePulls = typeof parallel !== "number" || parallel < 2;
  }
  const crash = out.crashLoopBackOff as Json;
  if (
    gates.enabled("KubeletCrashLoopBackOffMax") &&
    crash.maxContainerRestartPeriod === undefined
  ) {
    crash.maxContainerRestartPeriod = "5m0s";
  }
  if (
    gates.enabled("KubeletEnsureSecretPulledImages") &&
    !out.imagePullCredentialsVerificationPolicy
  ) {
    out.imagePullCredentialsVerificationPolicy = "NeverVerifyPreloadedImages";
  }
  canonicalizeDurations(out);
  return out as KubeletConfiguration;
}

/** The v1beta1 defaults in config-file mode (no evictionHard). */
export function defaultKubeletConfiguration(): KubeletConfiguration {
  return defaultsOf({});
}

/**
 * The flags-only configuration (no `--config`): v1beta1 defaults plus the
 * legacy flag defaults (anonymous auth on, webhook authn off, AlwaysAllow,
 * readOnlyPort 10255). No evictionHard.
 */
export function defaultFlagsOnlyKubeletConfiguration(): KubeletConfiguration {
  return defaultsOf({
    authentication: {
      anonymous: { enabled: true },
      webhook: { enabled: false },
    },
    authorization: { mode: "AlwaysAllow" },
    readOnlyPort: 10255,
  });
}
