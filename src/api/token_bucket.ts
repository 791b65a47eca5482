/**
 * A token bucket rate limiter, the client-side throttle client-go builds from `kubeAPIQPS`
 * and `kubeAPIBurst` (`flowcontrol.NewTokenBucketRateLimiter`): up to `burst` requests at
 * once, refilled at `qps` per second. Time comes from the injected clock.
 * @module
 */
import type { Clock } from "../clock/mod.ts";

/** Options of {@linkcode TokenBucket}. */
export interface TokenBucketOptions {
  /** Refill rate, tokens per second; 0 or less means no limit. */
  qps: number;
  /** Bucket size (at least 1). */
  burst: number;
}

/** Hands out one token per request, waiting while the bucket is empty. */
export class TokenBucket {
  #clock: Clock;
  #qps: number;
  #burst: number;
  #tokens: number;
  #last: number;

  constructor(deps: { clock: Clock }, options: TokenBucketOptions) {
    this.#clock = deps.clock;
    this.#qps = options.qps;
    this.#burst = Math.max(1, options.burst);
    this.#tokens = this.#burst;
    this.#last = deps.clock.now();
  }

  #refill(): void {
    const now = this.#clock.now();
    this.#tokens = Math.min(
      this.#burst,
      this.#tokens + ((now - this.#last) / 1000) * this.#qps,
    );
    this.#last = now;
  }

  /** Milliseconds until a token is free (0 when one is free now); takes it. */
  reserve(): number {
    if (this.#qps <= 0) return 0;
    this.#refill();
    this.#tokens -= 1;
    return this.#tokens >= 0
      ? 0
      : Math.ceil((-this.#tokens / this.#qps) * 1000);
  }

  /** Takes a token if one is free now and says so; never waits (client-go `TryAccept`). */
  tryTake(): boolean {
    if (this.#qps <= 0) return true;
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Resolves when the caller may send; rejects when `signal` aborts first. */
  async take(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await this.#clock.sleep(wait, signal);
  }
}
