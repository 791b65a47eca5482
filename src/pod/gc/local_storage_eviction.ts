/**
 * Local storage eviction of one pod (upstream eviction manager `localStorageEviction`), in
 * upstream's order:
 * 1. an emptyDir (disk or `medium: Memory`) holding more than its `sizeLimit`;
 * 2. the pod's local storage (its containers' writable layers and logs, disk emptyDirs) over
 *    the sum of its containers' `ephemeral-storage` limits;
 * 3. one container's writable layer and logs over its own `ephemeral-storage` limit.
 * The pod is evicted: phase Failed, reason `Evicted`, upstream's message, a `DisruptionTarget`
 * condition, a Warning `Evicted` event, and its containers stopped.
 *
 * Upstream measures every eviction-monitoring period (10 s); here the pod syncer measures
 * at each sync and requeues pods that have such a limit after that period.
 *
 * @module
 */
import { parseQuantity } from "../../util/quantity.ts";
import type { EmptyDirUsage } from "../../volume/mod.ts";
import type { Container, Pod, PodStatus } from "../types.ts";
import { terminatedByKubeletStatus } from "../status/kubelet_termination.ts";

/** The status reason (and event reason) of an evicted pod. */
export const EVICTED_REASON = "Evicted";
/** How often a pod with a size-limited emptyDir is measured (upstream monitoring period). */
export const EVICTION_MONITORING_PERIOD_MS = 10_000;

/** Upstream's message for an emptyDir over its limit (Go `%q` quoting, trailing space). */
export function emptyDirEvictionMessage(volume: string, limit: string): string {
  return `Usage of EmptyDir volume ${
    JSON.stringify(volume)
  } exceeds the limit ${JSON.stringify(limit)}. `;
}

const EPHEMERAL_STORAGE = "ephemeral-storage";

/** What a pod's local storage holds, as measured by the pod syncer. */
export interface LocalStorageUsage {
  emptyDirs: readonly EmptyDirUsage[];
  /** Per container name: bytes of its writable layer plus its log files. */
  containers: ReadonlyMap<string, number>;
}

/** A positive byte quantity, or undefined for a missing, zero or malformed one. */
function positive(text: unknown): { value: number; text: string } | undefined {
  if (text === undefined || text === null) return undefined;
  try {
    const q = parseQuantity(String(text));
    return q.value > 0 ? { value: q.value, text: q.text } : undefined;
  } catch {
    return undefined; // validation reports a bad quantity elsewhere
  }
}

function ephemeralLimit(c: Container) {
  return positive(c.resources?.limits?.[EPHEMERAL_STORAGE]);
}

/** Bytes as a quantity: the largest binary suffix that divides it, else plain bytes. */
function formatBytes(value: number): string {
  const suffixes = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"];
  for (let i = 0; i < suffixes.length; i++) {
    const unit = 1024 ** (suffixes.length - i);
    if (value >= unit && value % unit === 0) {
      return `${value / unit}${suffixes[i]}`;
    }
  }
  return String(value);
}

/**
 * The pod's `ephemeral-storage` limit (upstream `PodLimits`): the sum over its containers,
 * or an init container's when larger; undefined when no container sets one.
 */
export function podEphemeralLimit(
  pod: Pod,
): { value: number; text: string } | undefined {
  const app = pod.spec.containers.map(ephemeralLimit).filter((l) =>
    l !== undefined
  );
  const init = (pod.spec.initContainers ?? []).map(ephemeralLimit).filter((l) =>
    l !== undefined
  );
  if (app.length === 0 && init.length === 0) return undefined;
  const sum = app.reduce((n, l) => n + l.value, 0);
  const largestInit = init.reduce((m, l) => (l.value > m.value ? l : m), {
    value: 0,
    text: "0",
  });
  if (largestInit.value > sum) return largestInit;
  return app.length === 1 ? app[0]! : { value: sum, text: formatBytes(sum) };
}

/** Whether the pod has a limit local storage eviction measures against. */
export function needsLocalStorageCheck(pod: Pod): boolean {
  return hasSizeLimitedEmptyDir(pod) || podEphemeralLimit(pod) !== undefined;
}

/**
 * Upstream's eviction message for the first limit `usage` exceeds (emptyDir, then the pod,
 * then each container), or undefined when every limit holds. Usage equal to a limit is not
 * over it.
 */
export function localStorageEvictionMessage(
  pod: Pod,
  usage: LocalStorageUsage,
): string | undefined {
  for (const dir of usage.emptyDirs) {
    const limit = positive(dir.sizeLimit);
    if (limit && dir.bytes > limit.value) {
      return emptyDirEvictionMessage(dir.volume, limit.text);
    }
  }
  const podLimit = podEphemeralLimit(pod);
  if (podLimit) {
    const used = [...usage.containers.values()].reduce((n, b) => n + b, 0) +
      usage.emptyDirs.filter((d) => !d.memory).reduce((n, d) => n + d.bytes, 0);
    if (used > podLimit.value) {
      return `Pod ephemeral local storage usage exceeds the total limit of containers ${podLimit.text}. `;
    }
  }
  for (const c of pod.spec.containers) {
    const limit = ephemeralLimit(c);
    const used = usage.containers.get(c.name) ?? 0;
    if (limit && used > limit.value) {
      return `Container ${c.name} exceeded its local ephemeral storage limit ${
        JSON.stringify(limit.text)
      }. `;
    }
  }
  return undefined;
}

/** Whether the pod has an emptyDir with a positive `sizeLimit`. */
export function hasSizeLimitedEmptyDir(pod: Pod): boolean {
  return (pod.spec.volumes ?? []).some((v) => {
    const limit = (v.emptyDir as { sizeLimit?: unknown } | undefined)
      ?.sizeLimit;
    return positive(limit) !== undefined;
  });
}

/**
 * `status` as upstream's eviction status function leaves it: Failed, `Evicted`, the message
 * and a `DisruptionTarget` condition (its transition time kept from `previous`).
 */
export function evictedStatus(
  status: PodStatus,
  message: string,
  previous: PodStatus | undefined,
  now: string,
): PodStatus {
  return terminatedByKubeletStatus(
    status,
    { reason: EVICTED_REASON, message },
    previous,
    now,
  );
}
