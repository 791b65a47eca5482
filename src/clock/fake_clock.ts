import type { Clock } from "./clock.ts";

interface Sleeper {
  due: number;
  seq: number;
  resolve: () => void;
}

/**
 * A clock that only moves when a test calls `advance`. Sleeps resolve in
 * due-time order, and the microtask queue is drained after each one so code
 * awaiting a sleep can schedule its next sleep before time moves on.
 *
 * @example
 * ```ts
 * import { FakeClock } from "./fake_clock.ts";
 * const clock = new FakeClock(0);
 * let woke = false;
 * clock.sleep(1000).then(() => { woke = true; });
 * await clock.advance(1000);
 * console.assert(woke);
 * ```
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #sleepers: Sleeper[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Number of sleeps not yet resolved. */
  get pendingSleeps(): number {
    return this.#sleepers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = {
        due: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  /** Moves time forward by `ms`, waking every sleep that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.#nextDue(target);
      if (!next) break;
      this.#sleepers = this.#sleepers.filter((s) => s !== next);
      this.#now = Math.max(this.#now, next.due);
      next.resolve();
      await flushMicrotasks();
    }
    this.#now = target;
    await flushMicrotasks();
  }

  #nextDue(limit: number): Sleeper | undefined {
    let best: Sleeper | undefined;
    for (const s of this.#sleepers) {
      if (s.due > limit) continue;
      if (
        !best || s.due < best.due || (s.due === best.due && s.seq < best.seq)
      ) {
        best = s;
      }
    }
    return best;
  }
}

async function flushMicrotasks(): Promise<void> {
  // A macrotask turn lets every queued promise continuation run.
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
}
