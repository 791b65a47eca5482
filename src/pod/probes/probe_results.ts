/**
 * The probe result maps shared by the prober (writer) and the pod syncer and status computation
 * (readers), keyed by runtime container id (upstream `pkg/kubelet/prober/results`).
 *
 * @module
 */

/** Result of a probe as reported by a prober. */
export type ProbeResult = "success" | "failure" | "unknown";

/** The three kinds of container probe. */
export type ProbeType = "liveness" | "readiness" | "startup";

/** Latest published result per container id, one map per probe type. */
export interface ProbeResults {
  readonly liveness: Map<string, ProbeResult>;
  readonly startup: Map<string, ProbeResult>;
  /** Readiness as the status needs it: true only after a successful streak. */
  readonly readiness: Map<string, boolean>;
}

/** A published result that differs from the previous one. */
export interface ProbeResultChange {
  podUid: string;
  containerName: string;
  containerId: string;
  probeType: ProbeType;
  result: ProbeResult;
}

/** Creates the empty maps; give the same object to the prober and the pod syncer. */
export function createProbeResults(): ProbeResults {
  return { liveness: new Map(), startup: new Map(), readiness: new Map() };
}

/** Result a worker publishes for a new container before its first threshold is met. */
export function initialProbeResult(type: ProbeType): ProbeResult {
  if (type === "liveness") return "success";
  if (type === "readiness") return "failure";
  return "unknown";
}

/** Stores a result; returns true when the published value changed. */
export function setProbeResult(
  results: ProbeResults,
  type: ProbeType,
  containerId: string,
  result: ProbeResult,
): boolean {
  if (type === "readiness") {
    const ready = result === "success";
    const changed = results.readiness.get(containerId) !== ready;
    results.readiness.set(containerId, ready);
    return changed;
  }
  const map = results[type];
  const changed = map.get(containerId) !== result;
  map.set(containerId, result);
  return changed;
}

/** Forgets a container's result of one probe type. */
export function removeProbeResult(
  results: ProbeResults,
  type: ProbeType,
  containerId: string,
): void {
  results[type].delete(containerId);
}
