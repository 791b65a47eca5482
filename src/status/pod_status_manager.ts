/**
 * In-memory, versioned cache of the pod statuses computed by the syncer (kubelet's status
 * manager without the API-server half). Listeners hear about real changes only.
 *
 * @module
 */

import type { Pod, PodStatus } from "../api/mod.ts";
import type {
  PodStatusChange,
  PodStatusManager,
  VersionedPodStatus,
} from "./types.ts";

function fullName(pod: Pod): string {
  return `${pod.metadata.namespace ?? "default"}/${pod.metadata.name ?? ""}`;
}

/** Deep equality for JSON-shaped values (key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (
    typeof a !== "object" || typeof b !== "object" || a === null || b === null
  ) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => jsonEqual(ao[k], bo[k]));
}

function isTerminal(status: PodStatus | undefined): boolean {
  return status?.phase === "Succeeded" || status?.phase === "Failed";
}

/** Applies the manager's guards to a new status, given the cached one. */
function normalize(next: PodStatus, old: PodStatus | undefined): PodStatus {
  const status: PodStatus = structuredClone(next);
  if (!old) return status;
  if (old.startTime) status.startTime = old.startTime;
  if (isTerminal(old) && !isTerminal(status)) {
    // a terminal phase never goes back
    status.phase = old.phase!;
  }
  if (status.conditions && old.conditions) {
    status.conditions = status.conditions.map((c) => {
      const prev = old.conditions!.find((p) => p.type === c.type);
      return prev && prev.status === c.status && prev.lastTransitionTime
        ? { ...c, lastTransitionTime: prev.lastTransitionTime }
        : c;
    });
  }
  return status;
}

class MemoryPodStatusManager implements PodStatusManager {
  #entries = new Map<string, VersionedPodStatus>();
  #listeners = new Set<(change: PodStatusChange) => void>();

  setPodStatus(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata.uid ?? "";
    const current = this.#entries.get(uid);
    const normalized = normalize(status, current?.status);
    if (current && jsonEqual(current.status, normalized)) return;
    const entry: VersionedPodStatus = {
      uid,
      podFullName: fullName(pod),
      version: (current?.version ?? 0) + 1,
      status: normalized,
    };
    this.#entries.set(uid, entry);
    this.#emit({ kind: "set", pod, entry: structuredClone(entry) });
  }

  getPodStatus(uid: string): PodStatus | undefined {
    const entry = this.#entries.get(uid);
    return entry ? structuredClone(entry.status) : undefined;
  }

  removePod(uid: string): void {
    if (this.#entries.delete(uid)) this.#emit({ kind: "removed", uid });
  }

  allStatuses(): VersionedPodStatus[] {
    return [...this.#entries.values()].map((e) => structuredClone(e));
  }

  onChange(listener: (change: PodStatusChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(change: PodStatusChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch {
        // a failing listener must not break status bookkeeping for the others
      }
    }
  }
}

/** Creates an empty in-memory {@linkcode PodStatusManager}. */
export function createPodStatusManager(): PodStatusManager {
  return new MemoryPodStatusManager();
}
