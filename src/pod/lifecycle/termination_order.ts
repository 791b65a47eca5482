/**
 * The order in which a pod with sidecars (restartable init containers) stops, as upstream's
 * `newTerminationOrdering` (kuberuntime_termination_order.go): regular containers first, then
 * the sidecars from the last declared to the first. Every container still runs its preStop
 * hook at once; only the stop itself waits for its turn, and never past its grace period.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Pod } from "../types.ts";
import { isSidecar } from "../types.ts";

/**
 * For each running container that must wait, the running containers it waits for: a sidecar
 * waits for every running regular container and for the running sidecar declared right after
 * it. Containers not running are left out (nobody waits for them); without sidecars the map
 * is empty.
 */
export function terminationPrerequisites(
  pod: Pod,
  running: readonly string[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const inits = pod.spec.initContainers ?? [];
  if (!inits.some(isSidecar)) return out;
  const live = new Set(running);
  const mains = pod.spec.containers.map((c) => c.name).filter((n) =>
    live.has(n)
  );
  // only the next sidecar counts, running or not: one that already stopped releases its
  // predecessor at once, as upstream's pre-closed channel does
  let later: string | undefined;
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i]!;
    if (!isSidecar(c)) continue;
    if (live.has(c.name)) {
      const waits = [...mains];
      if (later !== undefined && live.has(later)) waits.push(later);
      out.set(c.name, waits);
    }
    later = c.name;
  }
  return out;
}

/** Who waits for whom while one pod stops; see {@linkcode terminationPrerequisites}. */
export interface TerminationTurns {
  /**
   * Waits until every prerequisite of `name` has stopped or `graceSeconds` have passed;
   * returns the seconds waited.
   */
  waitForTurn(name: string, graceSeconds: number): Promise<number>;
  /** `name` has stopped: those waiting for it may go on. Safe to call twice. */
  stopped(name: string): void;
}

/** The turns of one pod stop, timed by `clock`. */
export function terminationTurns(
  prerequisites: Map<string, string[]>,
  options: { clock: Clock; signal?: AbortSignal },
): TerminationTurns {
  const done = new Map<string, { promise: Promise<void>; resolve(): void }>();
  const entry = (name: string) => {
    let e = done.get(name);
    if (!e) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => resolve = r);
      e = { promise, resolve };
      done.set(name, e);
    }
    return e;
  };
  return {
    async waitForTurn(name, graceSeconds) {
      const waits = prerequisites.get(name) ?? [];
      if (graceSeconds <= 0 || waits.length === 0) return 0;
      const { clock } = options;
      const started = clock.now();
      const timer = new AbortController();
      const signal = options.signal
        ? AbortSignal.any([timer.signal, options.signal])
        : timer.signal;
      await Promise.race([
        Promise.all(waits.map((w) => entry(w).promise)),
        clock.sleep(graceSeconds * 1000, signal).catch(() => {}),
      ]);
      timer.abort();
      return (clock.now() - started) / 1000;
    },
    stopped(name) {
      entry(name).resolve();
    },
  };
}
