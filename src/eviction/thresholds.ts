/**
 * Eviction signals and thresholds (upstream `pkg/kubelet/eviction/api` and
 * `ParseThresholdConfig`): which node condition and which resource each signal stands for,
 * and the parsing of `evictionHard`, `evictionSoft`, `evictionSoftGracePeriod` and
 * `evictionMinimumReclaim` with upstream's error texts.
 * @module
 */
import { parseGoDuration } from "../util/go_duration.ts";
import { parseGoFloat } from "../util/go_strconv.ts";
import { parseQuantity } from "../util/quantity.ts";

/** An eviction signal (`evictionapi.Signal`). */
export type Signal =
  | "memory.available"
  | "allocatableMemory.available"
  | "nodefs.available"
  | "nodefs.inodesFree"
  | "imagefs.available"
  | "imagefs.inodesFree"
  | "containerfs.available"
  | "containerfs.inodesFree"
  | "pid.available";

/** The node conditions eviction reports. */
export type PressureCondition =
  | "MemoryPressure"
  | "DiskPressure"
  | "PIDPressure";

/** What a pod is evicted to reclaim (`signalToResource` values). */
export type ReclaimResource =
  | "memory"
  | "ephemeral-storage"
  | "inodes"
  | "pids";

/** Per signal: its node condition and resource (upstream's two `init` maps). */
export const SIGNALS: Readonly<
  Record<Signal, { condition: PressureCondition; resource: ReclaimResource }>
> = {
  "memory.available": { condition: "MemoryPressure", resource: "memory" },
  "allocatableMemory.available": {
    condition: "MemoryPressure",
    resource: "memory",
  },
  "nodefs.available": {
    condition: "DiskPressure",
    resource: "ephemeral-storage",
  },
  "nodefs.inodesFree": { condition: "DiskPressure", resource: "inodes" },
  "imagefs.available": {
    condition: "DiskPressure",
    resource: "ephemeral-storage",
  },
  "imagefs.inodesFree": { condition: "DiskPressure", resource: "inodes" },
  "containerfs.available": {
    condition: "DiskPressure",
    resource: "ephemeral-storage",
  },
  "containerfs.inodesFree": { condition: "DiskPressure", resource: "inodes" },
  "pid.available": { condition: "PIDPressure", resource: "pids" },
};

/** A threshold's value: an absolute quantity or a fraction of the signal's capacity. */
export type ThresholdValue =
  | { quantity: number; text: string }
  | { percentage: number };

/** One eviction threshold (`evictionapi.Threshold`, operator always LessThan). */
export interface Threshold {
  signal: Signal;
  value: ThresholdValue;
  /** 0 for a hard threshold. */
  gracePeriodMs: number;
  minReclaim?: ThresholdValue;
}

/** The parts of the configuration thresholds come from. */
export interface ThresholdConfig {
  evictionHard?: Readonly<Record<string, string>> | undefined;
  evictionSoft?: Readonly<Record<string, string>> | undefined;
  evictionSoftGracePeriod?: Readonly<Record<string, string>> | undefined;
  evictionMinimumReclaim?: Readonly<Record<string, string>> | undefined;
  enforceNodeAllocatable?: readonly string[] | undefined;
}

/** A bad threshold statement; `field` names the configuration map it came from. */
export class ThresholdError extends RangeError {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = "ThresholdError";
    this.field = field;
  }
}

function checkSignal(signal: string): Signal {
  if (!Object.hasOwn(SIGNALS, signal)) {
    throw new Error(`unsupported eviction signal ${signal}`);
  }
  return signal as Signal;
}

/** Go's `strconv.ParseFloat(…, 32)` of the text before `%`, as a float32 fraction. */
function percentage(text: string): number {
  return Math.fround(Math.fround(parseGoFloat(text.replace(/%+$/, ""))) / 100);
}

/** Upstream `parseThresholdStatement`: undefined for the ignored `0%` and `100%`. */
export function parseThresholdStatement(
  signal: string,
  text: string,
): Threshold | undefined {
  const s = checkSignal(signal);
  if (text.endsWith("%")) {
    if (text === "0%" || text === "100%") return undefined;
    const p = percentage(text);
    if (p < 0) {
      throw new Error(
        `eviction percentage threshold ${signal} must be >= 0%: ${text}`,
      );
    }
    if (p > 1) {
      throw new Error(
        `eviction percentage threshold ${signal} must be <= 100%: ${text}`,
      );
    }
    return { signal: s, value: { percentage: p }, gracePeriodMs: 0 };
  }
  const q = parseQuantity(text);
  if (q.value <= 0) {
    throw new Error(`eviction threshold ${signal} must be positive: ${text}`);
  }
  return {
    signal: s,
    value: { quantity: q.value, text: q.text },
    gracePeriodMs: 0,
  };
}

/** Upstream `parseMinimumReclaims` for one statement. */
export function parseMinimumReclaim(
  signal: string,
  text: string,
): ThresholdValue {
  checkSignal(signal);
  if (text.endsWith("%")) {
    const p = percentage(text);
    if (p <= 0) {
      throw new Error(
        `eviction percentage minimum reclaim ${signal} must be positive: ${text}`,
      );
    }
    return { percentage: p };
  }
  const q = parseQuantity(text);
  if (q.value < 0) {
    throw new Error(
      `negative eviction minimum reclaim specified for ${signal}`,
    );
  }
  return { quantity: q.value, text: q.text };
}

/** Upstream `parseGracePeriods` for one statement, in ms. */
export function parseGracePeriod(signal: string, text: string): number {
  checkSignal(signal);
  const ms = parseGoDuration(text);
  if (ms < 0) {
    throw new Error(
      `invalid eviction grace period specified: ${text}, must be a positive value`,
    );
  }
  return ms;
}

function entries(
  map: Readonly<Record<string, string>> | undefined,
): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0
  );
}

function each<T>(
  field: string,
  map: Readonly<Record<string, string>> | undefined,
  parse: (signal: string, text: string) => T,
): [string, T][] {
  return entries(map).map(([signal, text]) => {
    try {
      return [signal, parse(signal, text)];
    } catch (error) {
      throw new ThresholdError(
        field,
        error instanceof Error ? error.message : String(error),
      );
    }
  });
}

/**
 * Upstream `ParseThresholdConfig`: hard thresholds, then soft ones (each needs a grace period),
 * minimum reclaims attached by signal, and with `pods` in `enforceNodeAllocatable` an
 * `allocatableMemory.available` copy of a hard `memory.available` threshold. Statements are
 * taken in key order (upstream: Go's map order). Throws {@linkcode ThresholdError}.
 */
export function parseThresholdConfig(config: ThresholdConfig): Threshold[] {
  const hard = each(
    "evictionHard",
    config.evictionHard,
    parseThresholdStatement,
  );
  const soft = each(
    "evictionSoft",
    config.evictionSoft,
    parseThresholdStatement,
  );
  const periods = new Map(
    each(
      "evictionSoftGracePeriod",
      config.evictionSoftGracePeriod,
      parseGracePeriod,
    ),
  );
  const reclaims = new Map(
    each(
      "evictionMinimumReclaim",
      config.evictionMinimumReclaim,
      parseMinimumReclaim,
    ),
  );
  const results: Threshold[] = hard.flatMap(([, t]) => t ? [t] : []);
  for (const [signal, t] of soft) {
    if (!t) continue;
    const period = periods.get(signal);
    if (period === undefined) {
      throw new ThresholdError(
        "evictionSoft",
        `grace period must be specified for the soft eviction threshold ${signal}`,
      );
    }
    results.push({ ...t, gracePeriodMs: period });
  }
  for (const t of results) {
    const reclaim = reclaims.get(t.signal);
    if (reclaim) t.minReclaim = reclaim;
  }
  if ((config.enforceNodeAllocatable ?? []).includes("pods")) {
    for (const t of [...results]) {
      if (t.signal === "memory.available" && t.gracePeriodMs === 0) {
        results.push({ ...t, signal: "allocatableMemory.available" });
      }
    }
  }
  return results;
}

/** Upstream `GetThresholdQuantity`: the value in the signal's units for `capacity`. */
export function thresholdQuantity(
  value: ThresholdValue,
  capacity: number,
): number {
  if ("quantity" in value) return value.quantity;
  return Math.trunc(capacity * value.percentage);
}

/** A key equal for thresholds upstream treats as the same (it keys maps by the struct). */
export function thresholdKey(t: Threshold): string {
  const v = (value: ThresholdValue | undefined) =>
    value === undefined
      ? "-"
      : "quantity" in value
      ? `q${value.quantity}`
      : `p${value.percentage}`;
  return `${t.signal}|${t.gracePeriodMs}|${v(t.value)}|${v(t.minReclaim)}`;
}

/** Whether eviction for `t` is immediate (upstream `isHardEvictionThreshold`). */
export function isHardThreshold(t: Threshold): boolean {
  return t.gracePeriodMs === 0;
}
