/**
 * The runtime's view of each pod as last read, kept until the PLEG sees something of the pod
 * change (upstream's pod cache: a pod's periodic sync works from the status its last relist
 * left, not from new runtime calls). A read that began before an invalidation is never kept:
 * it may predate the change.
 *
 * @module
 */

import type { PodRuntimeStatus } from "../types.ts";

/** What a read started with; handed back to {@linkcode RuntimeStatusCache.store}. */
export interface CacheRead {
  readonly uid: string;
  /** Set when the pod was invalidated while the read ran. */
  stale: boolean;
}

/** Per pod UID, the last runtime status read since the last change the PLEG saw. */
export class RuntimeStatusCache {
  #statuses = new Map<string, PodRuntimeStatus>();
  #reads = new Map<string, Set<CacheRead>>();

  /** The kept status, when nothing of the pod changed since it was read. */
  get(uid: string): PodRuntimeStatus | undefined {
    return this.#statuses.get(uid);
  }

  /** Marks the start of a fresh read of the pod. */
  begin(uid: string): CacheRead {
    const read: CacheRead = { uid, stale: false };
    let reads = this.#reads.get(uid);
    if (!reads) this.#reads.set(uid, reads = new Set());
    reads.add(read);
    return read;
  }

  /** Keeps what `read` found, unless the pod changed while it ran. */
  store(read: CacheRead, status: PodRuntimeStatus): void {
    this.#end(read);
    if (!read.stale) this.#statuses.set(read.uid, status);
  }

  /** Ends a read whose result is not kept (it failed). */
  abandon(read: CacheRead): void {
    this.#end(read);
  }

  /** Something of the pod changed in the runtime: its kept status and running reads are void. */
  invalidate(uid: string): void {
    this.#statuses.delete(uid);
    for (const read of this.#reads.get(uid) ?? []) read.stale = true;
  }

  /** Number of pods with a kept status. */
  get size(): number {
    return this.#statuses.size;
  }

  #end(read: CacheRead): void {
    const reads = this.#reads.get(read.uid);
    reads?.delete(read);
    if (reads?.size === 0) this.#reads.delete(read.uid);
  }
}
