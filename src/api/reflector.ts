/**
 * A list-then-watch loop (client-go's reflector): LIST, then WATCH from the list's
 * resourceVersion with bookmarks, resuming from the last version seen when the server ends a
 * watch (its timeout, a dropped connection), relisting on 410 Gone (the version was compacted
 * away), and backing off after failures (0.8 s doubling to 30 s with 10 % jitter, as
 * client-go). The caller keeps the store: it gets each list's items and each event.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { ApiStatusError } from "./errors.ts";
import type { ListResult, WatchEvent } from "./list_watch.ts";
import { errorMessage } from "../util/error_message.ts";

/** The two calls of one resource. */
export interface ListWatch<T> {
  list(signal?: AbortSignal): Promise<ListResult<T>>;
  watch(
    resourceVersion: string,
    options: { timeoutSeconds: number; signal: AbortSignal },
  ): AsyncIterable<WatchEvent<T>>;
}

/** Dependencies of {@linkcode runReflector}. */
export interface ReflectorDeps<T> {
  api: ListWatch<T>;
  clock: Clock;
  logger: Logger;
  /** Jitter source (default `Math.random`). */
  random?: () => number;
}

/** Options of {@linkcode runReflector}. */
export interface ReflectorOptions<T> {
  /** What is listed, for log messages ("pods", "services"). */
  what: string;
  /** Every successful LIST's items, replacing what was known. */
  onList: (items: T[]) => void;
  /** Every watch event (bookmarks included). */
  onEvent: (event: WatchEvent<T>) => void;
  /** First back-off after a failure (default 800 ms). */
  initialBackOffMs?: number;
  /** Back-off cap (default 30 s). */
  maxBackOffMs?: number;
  /** Server-side watch timeout, before jitter of up to 100 % (default 300 s). */
  watchTimeoutSeconds?: number;
  signal: AbortSignal;
}

const message = (e: unknown) => errorMessage(e);

/** Lists and watches until `options.signal` aborts; never rejects. */
export async function runReflector<
  T extends { metadata?: { resourceVersion?: string } },
>(deps: ReflectorDeps<T>, options: ReflectorOptions<T>): Promise<void> {
  const { api, clock, logger } = deps;
  const { signal, what } = options;
  const random = deps.random ?? Math.random;
  const initialBackOff = options.initialBackOffMs ?? 800;
  const maxBackOff = options.maxBackOffMs ?? 30_000;
  const watchTimeout = options.watchTimeoutSeconds ?? 300;
  let backOff = initialBackOff;
  const pause = async () => {
    const ms = backOff * (1 + random() * 0.1);
    backOff = Math.min(backOff * 2, maxBackOff);
    await clock.sleep(ms, signal).catch(() => {});
  };
  /** Watches from `version` until the stream ends; returns the last version and the count. */
  const watch = async (version: string) => {
    let events = 0;
    const stream = api.watch(version, {
      timeoutSeconds: Math.floor(watchTimeout * (1 + random())),
      signal,
    });
    for await (const event of stream) {
      events++;
      version = event.object.metadata?.resourceVersion ?? version;
      options.onEvent(event);
    }
    return { version, events };
  };
  while (!signal.aborted) {
    let version: string;
    try {
      const listed = await api.list(signal);
      options.onList(listed.items);
      version = listed.resourceVersion;
    } catch (cause) {
      if (signal.aborted) break;
      logger.error(`Listing ${what} failed`, { err: message(cause) });
      await pause();
      continue;
    }
    while (!signal.aborted) {
      try {
        const result = await watch(version);
        version = result.version;
        // A stream closed before any event (a proxy cutting it) must not spin.
        if (result.events === 0) await pause();
        else backOff = initialBackOff;
      } catch (cause) {
        if (signal.aborted) break;
        if (cause instanceof ApiStatusError && cause.code === 410) {
          logger.info("Watch version expired; relisting", {
            resourceVersion: version,
          });
          break;
        }
        logger.error(`Watching ${what} failed; resuming`, {
          err: message(cause),
          resourceVersion: version,
        });
        await pause();
      }
    }
  }
}
