/**
 * When the sync loop last iterated (kubelet's `syncLoopMonitor`): the loop records the
 * injected clock's time before and after handling each event, readers such as the
 * `syncloop` health check only read it.
 *
 * @module
 */

/** What {@linkcode runSyncLoop} writes: one call per loop iteration boundary. */
export interface SyncLoopRecorder {
  /** Stores `now` (ms since the epoch, from the loop's clock) as the latest loop entry. */
  record(now: number): void;
}

/** The sync loop's liveness as readers see it. */
export interface SyncLoopActivity {
  /** The latest loop entry time (ms since the epoch); undefined before the loop first ran. */
  latestLoopEntryTime(): number | undefined;
}

/** Holds the latest loop entry time; written by the loop, read by health checks. */
export class SyncLoopMonitor implements SyncLoopRecorder, SyncLoopActivity {
  #latest: number | undefined;

  record(now: number): void {
    this.#latest = now;
  }

  latestLoopEntryTime(): number | undefined {
    return this.#latest;
  }
}
