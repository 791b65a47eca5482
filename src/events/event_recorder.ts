/**
 * The kubelet's event recorder (client-go `record.EventBroadcaster` with one recorder and
 * one sink): `event()` builds a core/v1 Event and queues it without waiting; a background
 * loop correlates each queued event ({@linkcode EventCorrelator}) and writes it to the sink,
 * creating new events and patching repeated ones, paced by `eventRecordQPS`/`eventBurst`.
 *
 * As upstream: at most 1000 events wait (more are dropped with an error log), a write that
 * fails to reach the server is retried up to 12 times 10 s apart (the first wait randomized),
 * an event the server rejects is dropped, a patch of an event that is gone becomes a create.
 * Every event is also logged at verbosity 3. Without a sink (standalone) events are only
 * logged.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import {
  ApiAlreadyExistsError,
  ApiNotFoundError,
  ApiStatusError,
} from "../api/mod.ts";
import { TokenBucket } from "../api/mod.ts";
import {
  type CorrelatorOptions,
  EventCorrelator,
  eventName,
  rfc3339,
} from "./event_correlator.ts";
import type {
  Event,
  EventRecorder,
  EventSink,
  EventType,
  ObjectReference,
} from "./types.ts";
import { errorMessage } from "../util/error_message.ts";

/** Dependencies of {@linkcode createEventRecorder}. */
export interface EventRecorderDeps {
  /** Omitted → events are only logged (standalone mode). */
  sink?: EventSink;
  clock: Clock;
  logger: Logger;
  /** Jitter of the first retry (default `Math.random`). */
  random?: () => number;
}

/** Options of {@linkcode createEventRecorder}. */
export interface EventRecorderOptions {
  /** `source.component` and `reportingComponent` (the kubelet: `kubelet`). */
  component: string;
  /** `source.host` and `reportingInstance`: the node name. */
  host: string;
  /** `eventRecordQPS` (default 50; 0 → client-go's default 5). */
  qps?: number;
  /** `eventBurst` (default 100; 0 → client-go's default 10). */
  burst?: number;
  /** Queue capacity (default 1000). */
  maxQueued?: number;
  /** Sleep between write attempts (default 10 s). */
  retrySleepMs?: number;
  /** Attempts per event (default 12). */
  maxTries?: number;
  correlator?: CorrelatorOptions;
}

/** A recorder with its writer loop. */
export interface RunningEventRecorder extends EventRecorder {
  /** Writes queued events until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>;
  /** Resolves when nothing is queued or being written (tests). */
  whenIdle(): Promise<void>;
}

/**
 * The kubelet's reference to its Node in events: the node name as UID too, and no
 * namespace (the event lands in `default`), as upstream's `nodeRef`.
 */
export function nodeReference(nodeName: string): ObjectReference {
  return { kind: "Node", name: nodeName, uid: nodeName, namespace: "" };
}

function errText(e: unknown): string {
  return errorMessage(e);
}

/** Builds the recorder; call `run` to start writing. */
export function createEventRecorder(
  deps: EventRecorderDeps,
  options: EventRecorderOptions,
): RunningEventRecorder {
  const { clock, logger, sink } = deps;
  const random = deps.random ?? Math.random;
  const maxQueued = options.maxQueued ?? 1000;
  const retrySleepMs = options.retrySleepMs ?? 10_000;
  const maxTries = options.maxTries ?? 12;
  const limiter = new TokenBucket({ clock }, {
    qps: options.qps || 5,
    burst: options.burst || 10,
  });
  const correlator = new EventCorrelator({ clock }, options.correlator);
  const queue: Event[] = [];
  let wake: (() => void) | undefined;
  let busy = false;
  let idleWaiters: (() => void)[] = [];
  let seq = 0;

  const settle = () => {
    if (queue.length || busy) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };

  /** One write; true when done (written or given up), false to retry. */
  const write = async (
    event: Event,
    patch: unknown,
    signal: AbortSignal,
  ): Promise<boolean> => {
    await limiter.take(signal);
    try {
      let stored: Event | undefined;
      if (patch) {
        try {
          stored = await sink!.patchEvent(
            event.metadata.namespace,
            event.metadata.name,
            patch,
            { signal },
          );
        } catch (e) {
          if (!(e instanceof ApiNotFoundError)) throw e;
        }
      }
      if (!stored) {
        const { resourceVersion: _rv, ...metadata } = event.metadata;
        stored = await sink!.createEvent({ ...event, metadata }, { signal });
      }
      correlator.updateState(stored);
      return true;
    } catch (e) {
      if (signal.aborted) return true;
      if (e instanceof ApiStatusError) {
        if (e instanceof ApiAlreadyExistsError) {
          logger.v(5).info("Server rejected event (will not retry!)", {
            reason: event.reason,
            err: errText(e),
          });
        } else {
          logger.error("Server rejected event (will not retry!)", {
            object: event.involvedObject.name,
            reason: event.reason,
            err: errText(e),
          });
        }
        return true;
      }
      logger.error("Unable to write event (may retry after sleeping)", {
        object: event.involvedObject.name,
        reason: event.reason,
        err: errText(e),
      });
      return false;
    }
  };

  const deliver = async (event: Event, signal: AbortSignal) => {
    const result = correlator.correlate(event);
    if (result.skip) return;
    for (let tries = 1;; tries++) {
      if (await write(result.event, result.patch, signal)) return;
      if (tries >= maxTries) {
        logger.error("Unable to write event (retry limit exceeded!)", {
          object: event.involvedObject.name,
          reason: event.reason,
        });
        return;
      }
      // Randomize the first wait so that nodes do not retry in step after an outage.
      const delay = tries === 1 ? retrySleepMs * random() : retrySleepMs;
      try {
        await clock.sleep(delay, signal);
      } catch {
        return;
      }
    }
  };

  return {
    event(
      object: ObjectReference,
      type: EventType,
      reason: string,
      message: string,
    ): void {
      const now = clock.now();
      const stamp = rfc3339(now);
      // Nanosecond names like Go's, made unique within a millisecond by a counter.
      const nanos = BigInt(now) * 1_000_000n + BigInt(seq++ % 1_000_000);
      const event: Event = {
        metadata: {
          name: eventName(object.name, nanos),
          namespace: object.namespace || "default",
        },
        involvedObject: object,
        reason,
        message,
        source: { component: options.component, host: options.host },
        firstTimestamp: stamp,
        lastTimestamp: stamp,
        count: 1,
        type,
        reportingComponent: options.component,
        reportingInstance: options.host,
      };
      logger.v(3).info("Event occurred", {
        object: object.namespace
          ? `${object.namespace}/${object.name}`
          : object.name,
        fieldPath: object.fieldPath ?? "",
        kind: object.kind,
        apiVersion: object.apiVersion ?? "",
        type,
        reason,
        message,
      });
      if (!sink) return;
      if (queue.length >= maxQueued) {
        logger.error(
          "Unable to record event: too many queued events, dropped event",
          { object: object.name, reason },
        );
        return;
      }
      queue.push(event);
      wake?.();
    },
    async run(signal: AbortSignal): Promise<void> {
      if (!sink) return;
      const onAbort = () => wake?.();
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        while (!signal.aborted) {
          const next = queue.shift();
          if (!next) {
            settle();
            await new Promise<void>((r) => (wake = r));
            wake = undefined;
            continue;
          }
          busy = true;
          try {
            await deliver(next, signal);
          } finally {
            busy = false;
          }
        }
      } finally {
        signal.removeEventListener("abort", onAbort);
        queue.length = 0;
        settle();
      }
    },
    whenIdle(): Promise<void> {
      if (!queue.length && !busy) return Promise.resolve();
      return new Promise((r) => idleWaiters.push(r));
    },
  };
}
