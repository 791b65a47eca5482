/**
 * One eviction pass decided without I/O (upstream `managerImpl.synchronize` up to the choice
 * of what to reclaim): thresholds met (with minimum reclaim while unresolved), when each was
 * first met, grace periods, node conditions held through the pressure transition period, and
 * the threshold to act on (memory first).
 * @module
 */
import {
  isHardThreshold,
  type PressureCondition,
  type ReclaimResource,
  type Signal,
  SIGNALS,
  type Threshold,
  thresholdKey,
  thresholdQuantity,
} from "./thresholds.ts";

/** One signal's observed figures (upstream `signalObservation`). */
export interface Observation {
  available: number;
  capacity: number;
  /** When the figure was measured (ms); passes with an unchanged time do not evict again. */
  timeMs?: number;
}

/** The observations of one pass, by signal. */
export type Observations = Partial<Record<Signal, Observation>>;

/** What the manager remembers between passes. */
export interface EvictionState {
  /** Thresholds that drove eviction in the last pass (upstream `m.thresholdsMet`). */
  thresholdsMet: readonly Threshold[];
  /** Threshold key → threshold and when it was first met. */
  firstObservedAt: ReadonlyMap<string, { threshold: Threshold; atMs: number }>;
  /** Condition → when it was last observed. */
  conditionsLastObservedAt: ReadonlyMap<PressureCondition, number>;
  lastObservations: Observations;
  /** The node conditions reported now. */
  conditions: readonly PressureCondition[];
}

/** The state before the first pass. */
export function initialEvictionState(): EvictionState {
  return {
    thresholdsMet: [],
    firstObservedAt: new Map(),
    conditionsLastObservedAt: new Map(),
    lastObservations: {},
    conditions: [],
  };
}

/**
 * Upstream `thresholdsMet`: thresholds whose signal is below the threshold quantity (with
 * `enforceMinReclaim`, below quantity + minimum reclaim). Equal is not met.
 */
export function thresholdsMet(
  thresholds: readonly Threshold[],
  observations: Observations,
  enforceMinReclaim: boolean,
): Threshold[] {
  return thresholds.filter((t) => {
    const observed = observations[t.signal];
    if (!observed) return false;
    let quantity = thresholdQuantity(t.value, observed.capacity);
    if (enforceMinReclaim && t.minReclaim) {
      quantity += thresholdQuantity(t.minReclaim, observed.capacity);
    }
    return quantity > observed.available;
  });
}

function merge(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  const out = [...a];
  const keys = new Set(a.map(thresholdKey));
  for (const t of b) if (!keys.has(thresholdKey(t))) out.push(t);
  return out;
}

/** The result of {@linkcode evaluateThresholds}. */
export interface Evaluation {
  state: EvictionState;
  /** Thresholds whose grace period passed and whose stats are new: eviction acts on these. */
  actionable: Threshold[];
}

/**
 * Upstream `synchronize` from the observations to the thresholds to act on: met thresholds
 * plus earlier ones not yet reclaimed past their minimum, first-observed times, conditions
 * kept while observed within `transitionPeriodMs`, grace periods, updated stats.
 */
export function evaluateThresholds(
  previous: EvictionState,
  input: {
    thresholds: readonly Threshold[];
    observations: Observations;
    nowMs: number;
    transitionPeriodMs: number;
  },
): Evaluation {
  const { observations, nowMs } = input;
  let met = thresholdsMet(input.thresholds, observations, false);
  if (previous.thresholdsMet.length > 0) {
    met = merge(met, thresholdsMet(previous.thresholdsMet, observations, true));
  }
  const firstObservedAt = new Map<
    string,
    { threshold: Threshold; atMs: number }
  >();
  for (const t of met) {
    const key = thresholdKey(t);
    firstObservedAt.set(key, {
      threshold: t,
      atMs: previous.firstObservedAt.get(key)?.atMs ?? nowMs,
    });
  }
  const lastObserved = new Map(previous.conditionsLastObservedAt);
  for (const t of met) lastObserved.set(SIGNALS[t.signal].condition, nowMs);
  const conditions = [...lastObserved].filter(([, at]) =>
    nowMs - at < input.transitionPeriodMs
  ).map(([c]) => c);
  const graceMet = [...firstObservedAt.values()].filter(({ threshold, atMs }) =>
    nowMs - atMs >= threshold.gracePeriodMs
  ).map(({ threshold }) => threshold);
  const actionable = graceMet.filter((t) => {
    const observed = observations[t.signal];
    if (!observed) return false;
    const last = previous.lastObservations[t.signal];
    return !last || observed.timeMs === undefined ||
      last.timeMs === undefined || observed.timeMs > last.timeMs;
  });
  return {
    state: {
      thresholdsMet: graceMet,
      firstObservedAt,
      conditionsLastObservedAt: lastObserved,
      lastObservations: observations,
      conditions: sortConditions(conditions),
    },
    actionable,
  };
}

const CONDITION_ORDER: readonly PressureCondition[] = [
  "MemoryPressure",
  "DiskPressure",
  "PIDPressure",
];

function sortConditions(
  conditions: readonly PressureCondition[],
): PressureCondition[] {
  return CONDITION_ORDER.filter((c) => conditions.includes(c));
}

function isMemory(signal: Signal): boolean {
  return signal === "memory.available" ||
    signal === "allocatableMemory.available";
}

/**
 * Upstream `byEvictionPriority` then `getReclaimableThreshold`: memory thresholds first,
 * else the first in order; undefined when nothing is to be reclaimed.
 */
export function thresholdToReclaim(
  thresholds: readonly Threshold[],
): { threshold: Threshold; resource: ReclaimResource } | undefined {
  const ordered = [
    ...thresholds.filter((t) => isMemory(t.signal)),
    ...thresholds.filter((t) => !isMemory(t.signal)),
  ];
  const first = ordered[0];
  return first &&
    { threshold: first, resource: SIGNALS[first.signal].resource };
}

/**
 * The grace period an evicted pod gets (upstream `synchronize`): 1 s for a hard threshold,
 * else `evictionMaxPodGracePeriod` capped by the pod's own termination grace period.
 */
export function evictionGracePeriodSeconds(
  threshold: Threshold,
  options: {
    maxPodGracePeriodSeconds: number;
    podGracePeriodSeconds?: number | undefined;
  },
): number {
  if (isHardThreshold(threshold)) return 1;
  const pod = options.podGracePeriodSeconds;
  return pod === undefined
    ? options.maxPodGracePeriodSeconds
    : Math.min(options.maxPodGracePeriodSeconds, pod);
}

/** The threshold quantity and what was available, for the eviction message. */
export function thresholdMetInfo(
  resource: ReclaimResource,
  thresholds: readonly Threshold[],
  observations: Observations,
): { quantity: number; available: number } | undefined {
  for (const t of thresholds) {
    if (SIGNALS[t.signal].resource !== resource) continue;
    const observed = observations[t.signal];
    if (observed) {
      return {
        quantity: thresholdQuantity(t.value, observed.capacity),
        available: observed.available,
      };
    }
  }
  return undefined;
}
