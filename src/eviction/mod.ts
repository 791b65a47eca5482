/**
 * Node-pressure eviction (upstream `pkg/kubelet/eviction`): thresholds from the configuration,
 * signals observed from the node, thresholds met with grace periods and minimum reclaim, the
 * MemoryPressure/DiskPressure/PIDPressure conditions, node-level reclaim, ranking and the
 * eviction of one pod per pass, and admission under pressure.
 *
 * Decisions are pure (`thresholds.ts`, `decide.ts`, `rank.ts`, `observe.ts`,
 * `admission.ts`); `manager.ts` and `node_stats.ts` act. Must not read global time (the
 * injected `Clock`) nor import the kubelet's composition root.
 *
 * @module
 */

export {
  isHardThreshold,
  parseGracePeriod,
  parseMinimumReclaim,
  parseThresholdConfig,
  parseThresholdStatement,
  SIGNALS,
  ThresholdError,
  thresholdQuantity,
} from "./thresholds.ts";
export type {
  PressureCondition,
  ReclaimResource,
  Signal,
  Threshold,
  ThresholdConfig,
  ThresholdValue,
} from "./thresholds.ts";
export {
  evaluateThresholds,
  evictionGracePeriodSeconds,
  initialEvictionState,
  thresholdsMet,
  thresholdToReclaim,
} from "./decide.ts";
export type {
  Evaluation,
  EvictionState,
  Observation,
  Observations,
} from "./decide.ts";
export { evictionMessage, rankPods } from "./rank.ts";
export type { ContainerUsage, FsStatsKind, PodUsage } from "./rank.ts";
export {
  conditionList,
  EVICTED_REASON,
  isCriticalPod,
  pressureRefusal,
  withPressureAdmission,
} from "./admission.ts";
export { memoryLimit, observationsFrom } from "./observe.ts";
export type { FsFigures, NodeStats } from "./observe.ts";
export { readNodeStats, readPidFigures, readPodUsage } from "./node_stats.ts";
export type { NodeStatsDeps, NodeStatsOptions } from "./node_stats.ts";
export {
  createEvictionManager,
  diskRankKinds,
  EVICTION_MONITORING_PERIOD_MS,
  nodeReclaimFor,
} from "./manager.ts";
export type {
  EvictionManager,
  EvictionManagerDeps,
  EvictionManagerOptions,
} from "./manager.ts";
