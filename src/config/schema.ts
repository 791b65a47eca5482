/**
 * The v1beta1 KubeletConfiguration document as a zod schema: the single
 * source of truth for the config type. The schema describes a defaulted
 * document: fields that always get a default are required, fields that
 * upstream's `SetDefaults_KubeletConfiguration` leaves unset are optional.
 * It is also the type checker of decoded documents (`check_types.ts`).
 * @module
 */
import { z } from "zod";
import {
  BOOL,
  BOOL_MAP,
  DURATION,
  FLOAT64,
  FLUSH_FREQUENCY,
  INT32,
  INT64,
  QUANTITY,
  RESOURCE_LIST,
  STRING,
  STRING_LIST,
  STRING_MAP,
  UINT32,
} from "./schema_types.ts";

const LOG_FORMAT_OPTIONS = z.object({
  splitStream: BOOL.optional(),
  infoBufferSize: QUANTITY,
});

/** component-base `LoggingConfiguration` (v0.34). */
export const LoggingConfigurationSchema = z.object({
  format: STRING,
  flushFrequency: FLUSH_FREQUENCY,
  verbosity: UINT32,
  vmodule: z
    .array(z.object({ filePattern: STRING, verbosity: UINT32 }))
    .optional(),
  options: z.object({
    text: LOG_FORMAT_OPTIONS,
    json: LOG_FORMAT_OPTIONS,
  }),
});

const AUTHENTICATION = z.object({
  x509: z.object({ clientCAFile: STRING.optional() }),
  webhook: z.object({ enabled: BOOL, cacheTTL: DURATION }),
  anonymous: z.object({ enabled: BOOL }),
});

const AUTHORIZATION = z.object({
  mode: STRING,
  webhook: z.object({
    cacheAuthorizedTTL: DURATION,
    cacheUnauthorizedTTL: DURATION,
  }),
});

const TAINT = z.object({
  key: STRING,
  value: STRING.optional(),
  effect: STRING,
  timeAdded: z.union([STRING, z.null()]).optional(),
});

/** The v1beta1 `KubeletConfiguration`, all 123 fields plus TypeMeta. */
export const KubeletConfigurationSchema = z.object({
  apiVersion: STRING,
  kind: STRING,
  enableServer: BOOL,
  staticPodPath: STRING.optional(),
  podLogsDir: STRING,
  syncFrequency: DURATION,
  fileCheckFrequency: DURATION,
  httpCheckFrequency: DURATION,
  staticPodURL: STRING.optional(),
  staticPodURLHeader: z.record(z.string(), STRING_LIST).optional(),
  address: STRING,
  port: INT32,
  readOnlyPort: INT32.optional(),
  tlsCertFile: STRING.optional(),
  tlsPrivateKeyFile: STRING.optional(),
  tlsCipherSuites: STRING_LIST.optional(),
  tlsMinVersion: STRING.optional(),
  rotateCertificates: BOOL.optional(),
  serverTLSBootstrap: BOOL.optional(),
  authentication: AUTHENTICATION,
  authorization: AUTHORIZATION,
  registryPullQPS: INT32,
  registryBurst: INT32,
  imagePullCredentialsVerificationPolicy: STRING.optional(),
  preloadedImagesVerificationAllowlist: STRING_LIST.optional(),
  eventRecordQPS: INT32,
  eventBurst: INT32,
  enableDebuggingHandlers: BOOL,
  enableContentionProfiling: BOOL.optional(),
  healthzPort: INT32,
  healthzBindAddress: STRING,
  oomScoreAdj: INT32,
  clusterDomain: STRING.optional(),
  clusterDNS: STRING_LIST.optional(),
  streamingConnectionIdleTimeout: DURATION,
  nodeStatusUpdateFrequency: DURATION,
  nodeStatusReportFrequency: DURATION,
  nodeLeaseDurationSeconds: INT32,
  imageMinimumGCAge: DURATION,
  imageMaximumGCAge: DURATION,
  imageGCHighThresholdPercent: INT32,
  imageGCLowThresholdPercent: INT32,
  volumeStatsAggPeriod: DURATION,
  kubeletCgroups: STRING.optional(),
  systemCgroups: STRING.optional(),
  cgroupRoot: STRING.optional(),
  cgroupsPerQOS: BOOL,
  cgroupDriver: STRING,
  cpuManagerPolicy: STRING,
  singleProcessOOMKill: BOOL.optional(),
  cpuManagerPolicyOptions: STRING_MAP.optional(),
  cpuManagerReconcilePeriod: DURATION,
  memoryManagerPolicy: STRING,
  topologyManagerPolicy: STRING,
  topologyManagerScope: STRING,
  topologyManagerPolicyOptions: STRING_MAP.optional(),
  qosReserved: STRING_MAP.optional(),
  runtimeRequestTimeout: DURATION,
  hairpinMode: STRING,
  maxPods: INT32,
  podCIDR: STRING.optional(),
  podPidsLimit: INT64,
  resolvConf: STRING,
  runOnce: BOOL.optional(),
  cpuCFSQuota: BOOL,
  cpuCFSQuotaPeriod: DURATION,
  nodeStatusMaxImages: INT32,
  maxOpenFiles: INT64,
  contentType: STRING,
  kubeAPIQPS: INT32,
  kubeAPIBurst: INT32,
  serializeImagePulls: BOOL,
  maxParallelImagePulls: INT32.optional(),
  evictionHard: STRING_MAP.optional(),
  evictionSoft: STRING_MAP.optional(),
  evictionSoftGracePeriod: STRING_MAP.optional(),
  evictionPressureTransitionPeriod: DURATION,
  evictionMaxPodGracePeriod: INT32.optional(),
  evictionMinimumReclaim: STRING_MAP.optional(),
  mergeDefaultEvictionSettings: BOOL,
  podsPerCore: INT32.optional(),
  enableControllerAttachDetach: BOOL,
  protectKernelDefaults: BOOL.optional(),
  makeIPTablesUtilChains: BOOL,
  iptablesMasqueradeBit: INT32,
  iptablesDropBit: INT32,
  featureGates: BOOL_MAP.optional(),
  failSwapOn: BOOL,
  memorySwap: z.object({ swapBehavior: STRING.optional() }),
  containerLogMaxSize: QUANTITY,
  containerLogMaxFiles: INT32,
  containerLogMaxWorkers: INT32,
  containerLogMonitorInterval: DURATION,
  configMapAndSecretChangeDetectionStrategy: STRING,
  systemReserved: STRING_MAP.optional(),
  kubeReserved: STRING_MAP.optional(),
  reservedSystemCPUs: STRING.optional(),
  showHiddenMetricsForVersion: STRING.optional(),
  systemReservedCgroup: STRING.optional(),
  kubeReservedCgroup: STRING.optional(),
  enforceNodeAllocatable: STRING_LIST,
  allowedUnsafeSysctls: STRING_LIST.optional(),
  volumePluginDir: STRING,
  providerID: STRING.optional(),
  kernelMemcgNotification: BOOL.optional(),
  logging: LoggingConfigurationSchema,
  enableSystemLogHandler: BOOL,
  enableSystemLogQuery: BOOL,
  shutdownGracePeriod: DURATION,
  shutdownGracePeriodCriticalPods: DURATION,
  shutdownGracePeriodByPodPriority: z
    .array(z.object({ priority: INT32, shutdownGracePeriodSeconds: INT64 }))
    .optional(),
  crashLoopBackOff: z.object({
    maxContainerRestartPeriod: DURATION.optional(),
  }),
  reservedMemory: z
    .array(z.object({ numaNode: INT32, limits: RESOURCE_LIST }))
    .optional(),
  enableProfilingHandler: BOOL,
  enableDebugFlagsHandler: BOOL,
  seccompDefault: BOOL,
  memoryThrottlingFactor: FLOAT64,
  registerWithTaints: z.array(TAINT).optional(),
  registerNode: BOOL,
  tracing: z
    .object({
      endpoint: STRING.optional(),
      samplingRatePerMillion: INT32.optional(),
    })
    .optional(),
  localStorageCapacityIsolation: BOOL,
  containerRuntimeEndpoint: STRING,
  imageServiceEndpoint: STRING.optional(),
  failCgroupV1: BOOL,
  userNamespaces: z.object({ idsPerPod: INT64.optional() }).optional(),
});

/** A defaulted v1beta1 KubeletConfiguration (JSON shape, camelCase keys). */
export type KubeletConfiguration = z.infer<typeof KubeletConfigurationSchema>;

export { KUBELET_CONFIG_API_VERSION, KUBELET_CONFIG_KIND } from "./envelope.ts";
