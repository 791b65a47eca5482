import type { Pod, PodStatus } from "../api/mod.ts";

/** One cached pod status with a version that increases on every real change. */
export interface VersionedPodStatus {
  uid: string;
  /** `namespace/name` of the pod the status belongs to. */
  podFullName: string;
  /** Monotonic per-pod version, starting at 1. */
  version: number;
  status: PodStatus;
}

/** Emitted to `onChange` listeners after a status really changed (or was removed). */
export type PodStatusChange =
  | { kind: "set"; pod: Pod; entry: VersionedPodStatus }
  | { kind: "removed"; uid: string };

/**
 * Kubelet's cache of the pod statuses it computed. Later issues publish the cache to the API
 * server through the `onChange` hook. All methods are synchronous and never throw.
 */
export interface PodStatusManager {
  /**
   * Stores `status` for the pod. A status equal to the cached one is ignored (no version bump,
   * no listener call). `startTime` is preserved once set; condition `lastTransitionTime`s are
   * preserved while the condition status is unchanged; a terminal phase is sticky.
   */
  setPodStatus(pod: Pod, status: PodStatus): void;
  /** The cached status of a pod, or undefined when none was set (or it was removed). */
  getPodStatus(uid: string): PodStatus | undefined;
  /** Forgets a pod's status; listeners get a `removed` change if there was one. */
  removePod(uid: string): void;
  /** Snapshot of every cached status. */
  allStatuses(): VersionedPodStatus[];
  /** Registers a listener; returns a function that unregisters it. */
  onChange(listener: (change: PodStatusChange) => void): () => void;
}
