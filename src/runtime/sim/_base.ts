/**
 * Shared plumbing of the simulated runtime: the call log, injected errors,
 * cancellation and clock-driven waits. `SimRuntime` extends this.
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import {
  CanceledError,
  DeadlineExceededError,
  RuntimeUnavailableError,
} from "../errors.ts";
import type { CallOptions, ImageService, RuntimeService } from "../types.ts";

/** Any CRI method name of either service. */
export type SimMethod = keyof RuntimeService | keyof ImageService;

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Base class with the test hooks STYLE.md §4.3 asks fakes to have. */
export class SimRuntimeBase {
  /** Every CRI method called, in order (including calls that failed). */
  readonly calls: SimMethod[] = [];
  readonly #errors = new Map<SimMethod, Error[]>();
  #closed = false;
  protected readonly clock: Clock;
  protected readonly logger: Logger | undefined;

  constructor(clock: Clock, logger: Logger | undefined) {
    this.clock = clock;
    this.logger = logger;
  }

  /** Makes the next call of `method` fail with `error` (errors queue up). */
  injectError(method: SimMethod, error: Error): void {
    this.#errors.set(method, [...(this.#errors.get(method) ?? []), error]);
  }

  /** Marks the runtime closed; later calls fail with Unavailable. Idempotent. */
  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Records a call and throws what tests injected, a cancel or a closed error. */
  protected enter(
    method: SimMethod,
    options: CallOptions | undefined,
  ): Promise<void> {
    try {
      this.enterSync(method, options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** {@linkcode enter} for methods that cannot await. */
  protected enterSync(
    method: SimMethod,
    options: CallOptions | undefined,
  ): void {
    this.calls.push(method);
    this.logger?.v(5).info("Simulated CRI call", { method });
    if (this.#closed) {
      throw new RuntimeUnavailableError("simulated runtime is closed");
    }
    if (options?.signal?.aborted) {
      throw new CanceledError("context canceled", {
        cause: options.signal.reason,
      });
    }
    const queued = this.#errors.get(method);
    const error = queued?.shift();
    if (queued && queued.length === 0) this.#errors.delete(method);
    if (error) throw error;
  }

  /**
   * Waits `ms` on the injected clock. Honours the call's signal (Canceled)
   * and `timeoutMs` (DeadlineExceeded after that long). `Infinity` waits until
   * the signal aborts.
   */
  protected async wait(
    ms: number,
    options: CallOptions | undefined,
  ): Promise<void> {
    if (ms <= 0) return;
    const limit = options?.timeoutMs;
    if (limit !== undefined && ms > limit) {
      await this.wait(limit, options?.signal ? { signal: options.signal } : {});
      throw new DeadlineExceededError("context deadline exceeded");
    }
    const signal = options?.signal;
    try {
      if (Number.isFinite(ms)) {
        await this.clock.sleep(Math.min(ms, MAX_TIMER_MS), signal);
      } else {
        await waitForAbort(signal);
      }
    } catch (error) {
      throw new CanceledError("context canceled", { cause: error });
    }
  }
}

function waitForAbort(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((_, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), {
      once: true,
    });
  });
}
