/** Waiting on the injected clock the way a CRI call waits on its context. */

import type { Clock } from "../../clock/mod.ts";
import { CanceledError, DeadlineExceededError } from "../errors.ts";
import type { CallOptions } from "../types.ts";

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits `ms` on `clock`. Honours the call's signal (Canceled) and `timeoutMs`
 * (DeadlineExceeded after that long). `Infinity` waits until the signal
 * aborts.
 */
export async function callWait(
  clock: Clock,
  ms: number,
  options: CallOptions | undefined,
): Promise<void> {
  if (ms <= 0) return;
  const limit = options?.timeoutMs;
  if (limit !== undefined && ms > limit) {
    await callWait(
      clock,
      limit,
      options?.signal ? { signal: options.signal } : {},
    );
    throw new DeadlineExceededError("context deadline exceeded");
  }
  const signal = options?.signal;
  try {
    if (Number.isFinite(ms)) {
      await clock.sleep(Math.min(ms, MAX_TIMER_MS), signal);
    } else {
      await waitForAbort(signal);
    }
  } catch (error) {
    throw new CanceledError("context canceled", { cause: error });
  }
}

function waitForAbort(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((_, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), {
      once: true,
    });
  });
}
