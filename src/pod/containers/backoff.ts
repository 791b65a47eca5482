/**
 * Exponential back-off per key (kubelet's `flowcontrol.Backoff`), used for crash-loop restarts
 * and image pulls. Time comes from the injected clock.
 *
 * Semantics: `next(key, eventTime)` opens (or doubles, up to the maximum) the window for `key`;
 * `isInBackoffSince(key, eventTime)` is true while less than the window has passed since
 * `eventTime`. An entry whose last update is more than `resetAfterMs` older than the event is
 * treated as fresh again, so a container that ran long enough starts over at the initial delay.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Container, Pod } from "../types.ts";
import { containerHashString } from "./container_hash.ts";

/** Crash-loop back-off starts at 10 s. */
export const CONTAINER_BACKOFF_INITIAL_MS = 10_000;
/** Crash-loop back-off is capped at 300 s (`MaxContainerBackOff`). */
export const CONTAINER_BACKOFF_MAX_MS = 300_000;
/** A crash-loop entry is reset when its last update is more than 10 min older than the event. */
export const CONTAINER_BACKOFF_RESET_MS = 600_000;
/** Image pull back-off starts at 10 s. */
export const IMAGE_BACKOFF_INITIAL_MS = 10_000;
/** Image pull back-off is capped at 300 s (`MaxImageBackOff`). */
export const IMAGE_BACKOFF_MAX_MS = 300_000;

/** Options of {@linkcode createBackoff}. */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Defaults to twice `maxMs`. */
  resetAfterMs?: number;
}

/** Per-key exponential back-off. */
export interface Backoff {
  /** Opens or widens the window for `key`; `eventTime` (ms epoch) decides whether it resets. */
  next(key: string, eventTime: number): void;
  /** True while less than the current window has passed since `eventTime`. */
  isInBackoffSince(key: string, eventTime: number): boolean;
  /** True while less than the current window has passed since the entry's last update. */
  isInBackoffSinceUpdate(key: string, eventTime: number): boolean;
  /** ms epoch when the window opened by the last update closes (undefined without entry). */
  expiresAtSinceUpdate(key: string): number | undefined;
  /** Current window of `key` in ms (0 when there is no entry). */
  get(key: string): number;
  /** ms epoch when the window that started at `eventTime` closes (undefined without entry). */
  expiresAt(key: string, eventTime: number): number | undefined;
  /** Forgets `key`. */
  reset(key: string): void;
  /** Drops entries not updated for longer than the reset period. */
  gc(): void;
  /** Number of keys tracked (for tests and metrics). */
  readonly size: number;
}

interface Entry {
  windowMs: number;
  lastUpdate: number;
}

class ExponentialBackoff implements Backoff {
  #clock: Clock;
  #initialMs: number;
  #maxMs: number;
  #resetAfterMs: number;
  #entries = new Map<string, Entry>();

  constructor(clock: Clock, options: BackoffOptions) {
    if (!(options.initialMs > 0) || !(options.maxMs >= options.initialMs)) {
      throw new RangeError(
        `Invalid back-off: initialMs must be > 0 and maxMs >= initialMs, got ${options.initialMs} and ${options.maxMs}`,
      );
    }
    this.#clock = clock;
    this.#initialMs = options.initialMs;
    this.#maxMs = options.maxMs;
    this.#resetAfterMs = options.resetAfterMs ?? 2 * options.maxMs;
  }

  get size(): number {
    return this.#entries.size;
  }

  #expired(entry: Entry, eventTime: number): boolean {
    return eventTime - entry.lastUpdate > this.#resetAfterMs;
  }

  next(key: string, eventTime: number): void {
    const entry = this.#entries.get(key);
    const now = this.#clock.now();
    if (!entry || this.#expired(entry, eventTime)) {
      this.#entries.set(key, { windowMs: this.#initialMs, lastUpdate: now });
      return;
    }
    entry.windowMs = Math.min(entry.windowMs * 2, this.#maxMs);
    entry.lastUpdate = now;
  }

  isInBackoffSince(key: string, eventTime: number): boolean {
    const entry = this.#entries.get(key);
    if (!entry || this.#expired(entry, eventTime)) return false;
    return this.#clock.now() - eventTime < entry.windowMs;
  }

  isInBackoffSinceUpdate(key: string, eventTime: number): boolean {
    const entry = this.#entries.get(key);
    if (!entry || this.#expired(entry, eventTime)) return false;
    return eventTime - entry.lastUpdate < entry.windowMs;
  }

  expiresAtSinceUpdate(key: string): number | undefined {
    const entry = this.#entries.get(key);
    return entry ? entry.lastUpdate + entry.windowMs : undefined;
  }

  get(key: string): number {
    return this.#entries.get(key)?.windowMs ?? 0;
  }

  expiresAt(key: string, eventTime: number): number | undefined {
    const entry = this.#entries.get(key);
    return entry ? eventTime + entry.windowMs : undefined;
  }

  reset(key: string): void {
    this.#entries.delete(key);
  }

  gc(): void {
    const now = this.#clock.now();
    for (const [key, entry] of this.#entries) {
      if (now - entry.lastUpdate > this.#resetAfterMs) {
        this.#entries.delete(key);
      }
    }
  }
}

/** Creates a per-key exponential back-off driven by `deps.clock`. */
export function createBackoff(
  deps: { clock: Clock },
  options: BackoffOptions,
): Backoff {
  return new ExponentialBackoff(deps.clock, options);
}

/** Crash-loop back-off with the kubelet's constants (10 s → 300 s, reset after 10 min). */
export function createContainerBackoff(deps: { clock: Clock }): Backoff {
  return createBackoff(deps, {
    initialMs: CONTAINER_BACKOFF_INITIAL_MS,
    maxMs: CONTAINER_BACKOFF_MAX_MS,
    resetAfterMs: CONTAINER_BACKOFF_RESET_MS,
  });
}

/** Image pull back-off with the kubelet's constants (10 s → 300 s). */
export function createImageBackoff(deps: { clock: Clock }): Backoff {
  return createBackoff(deps, {
    initialMs: IMAGE_BACKOFF_INITIAL_MS,
    maxMs: IMAGE_BACKOFF_MAX_MS,
  });
}

/** Crash-loop key: `<podName>_<namespace>_<podUID>_<containerName>_<hexHash>`. */
export function containerBackoffKey(pod: Pod, container: Container): string {
  const m = pod.metadata;
  return `${m.name ?? ""}_${m.namespace ?? "default"}_${
    m.uid ?? ""
  }_${container.name}_${containerHashString(container)}`;
}

/** Image pull key: `<podUID>_<image>`. */
export function imageBackoffKey(pod: Pod, image: string): string {
  return `${pod.metadata.uid ?? ""}_${image}`;
}
