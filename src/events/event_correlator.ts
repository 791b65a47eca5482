/**
 * client-go's event correlator (`tools/record/events_cache.go`), the part of event recording
 * that decides, without I/O, what to write for each new event:
 *
 * - aggregation: events that differ only in their message (same source, object, type and
 *   reason) become one event `(combined from similar events): <latest message>` once 10
 *   distinct messages were seen within 10 minutes of each other;
 * - de-duplication: an event identical to one already written (same key, message included)
 *   is written as a patch of that event's `count`, `lastTimestamp` and `message`;
 * - spam filter: per source and object a token bucket of 25 events refilled at one event
 *   per 5 minutes; events beyond it are skipped.
 *
 * The caches are LRUs of 4096 entries each, as upstream.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import { TokenBucket } from "../api/mod.ts";
import type { Event } from "./types.ts";

/** Upstream defaults (`events_cache.go`). */
export const CORRELATOR_DEFAULTS: Readonly<Required<CorrelatorOptions>> = {
  cacheSize: 4096,
  aggregateMaxEvents: 10,
  aggregateIntervalMs: 600_000,
  spamBurst: 25,
  spamQps: 1 / 300,
};

/** Options of {@linkcode EventCorrelator}; every field defaults to upstream's value. */
export interface CorrelatorOptions {
  /** Entries of each LRU cache. */
  cacheSize?: number;
  /** Distinct messages within the interval before events are combined. */
  aggregateMaxEvents?: number;
  aggregateIntervalMs?: number;
  /** Per source and object: events at once, then refilled at `spamQps` per second. */
  spamBurst?: number;
  spamQps?: number;
}

/** The patch of a repeated event (what client-go's two-way merge patch holds). */
export interface EventCountPatch {
  count: number;
  lastTimestamp: string;
  message: string;
}

/** What to do with one event. */
export type CorrelateResult =
  | { skip: true }
  | { skip: false; event: Event; patch?: EventCountPatch };

/** A least-recently-used map of bounded size. */
class Lru<V> {
  #map = new Map<string, V>();
  constructor(readonly size: number) {}
  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.size) {
      this.#map.delete(this.#map.keys().next().value!);
    }
  }
}

function objectKey(e: Event): string[] {
  const o = e.involvedObject;
  return [
    e.source.component,
    e.source.host,
    o.kind,
    o.namespace ?? "",
    o.name,
  ];
}

/** The full identity of an event: source, object (with field path), type, reason, message. */
export function eventKey(e: Event): string {
  const o = e.involvedObject;
  return [
    ...objectKey(e),
    o.fieldPath ?? "",
    o.uid ?? "",
    o.apiVersion ?? "",
    e.type,
    e.reason,
    e.message,
  ].join("");
}

/** The spam filter's key: source and object only. */
export function spamKey(e: Event): string {
  const o = e.involvedObject;
  return [...objectKey(e), o.uid ?? "", o.apiVersion ?? ""].join("");
}

/** The aggregation group: everything but the message (and the field path, as upstream). */
export function aggregateKey(e: Event): string {
  const o = e.involvedObject;
  return [
    ...objectKey(e),
    o.uid ?? "",
    o.apiVersion ?? "",
    e.type,
    e.reason,
    e.reportingComponent,
    e.reportingInstance,
  ].join("");
}

/** RFC 3339 with whole seconds, as `metav1.Time` serializes. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** `<object name>.<hex nanoseconds>`, the name client-go gives a new event. */
export function eventName(objectName: string, nanos: bigint): string {
  return `${objectName}.${nanos.toString(16)}`;
}

interface Observation {
  count: number;
  firstTimestamp: string;
  name: string;
  resourceVersion: string;
}

/** Filters, aggregates and counts events before they are written. */
export class EventCorrelator {
  #clock: Clock;
  #o: Required<CorrelatorOptions>;
  #aggregates: Lru<{ messages: Set<string>; last: number }>;
  #observed: Lru<Observation>;
  #spam: Lru<TokenBucket>;

  constructor(deps: { clock: Clock }, options: CorrelatorOptions = {}) {
    this.#clock = deps.clock;
    this.#o = { ...CORRELATOR_DEFAULTS, ...options };
    this.#aggregates = new Lru(this.#o.cacheSize);
    this.#observed = new Lru(this.#o.cacheSize);
    this.#spam = new Lru(this.#o.cacheSize);
  }

  /** Upstream `EventCorrelate`: aggregate, then count, then the spam filter. */
  correlate(event: Event): CorrelateResult {
    const { event: aggregated, key } = this.#aggregate(event);
    const { event: observed, patch } = this.#observe(aggregated, key);
    if (!this.#allow(observed)) return { skip: true };
    return patch
      ? { skip: false, event: observed, patch }
      : { skip: false, event: observed };
  }

  /** Records what the server stored (name and resourceVersion) for later patches. */
  updateState(stored: Event): void {
    this.#observed.set(eventKey(stored), {
      count: stored.count,
      firstTimestamp: stored.firstTimestamp,
      name: stored.metadata.name,
      resourceVersion: stored.metadata.resourceVersion ?? "",
    });
  }

  #aggregate(event: Event): { event: Event; key: string } {
    const now = this.#clock.now();
    const group = aggregateKey(event);
    let record = this.#aggregates.get(group);
    if (!record || now - record.last > this.#o.aggregateIntervalMs) {
      record = { messages: new Set(), last: now };
    }
    record.messages.add(event.message);
    record.last = now;
    this.#aggregates.set(group, record);
    if (record.messages.size < this.#o.aggregateMaxEvents) {
      return { event, key: eventKey(event) };
    }
    // Keep the set at the threshold so that every further message aggregates too.
    record.messages.delete(record.messages.values().next().value!);
    const stamp = rfc3339(now);
    return {
      key: group,
      event: {
        metadata: {
          name: eventName(
            event.involvedObject.name,
            BigInt(now) * 1_000_000n,
          ),
          namespace: event.metadata.namespace,
        },
        involvedObject: event.involvedObject,
        reason: event.reason,
        message: `(combined from similar events): ${event.message}`,
        source: event.source,
        firstTimestamp: stamp,
        lastTimestamp: stamp,
        count: 1,
        type: event.type,
        // client-go's aggregate copy leaves the reporting fields empty.
        reportingComponent: "",
        reportingInstance: "",
      },
    };
  }

  #observe(
    event: Event,
    key: string,
  ): { event: Event; patch?: EventCountPatch } {
    const last = this.#observed.get(key);
    let out = event;
    let patch: EventCountPatch | undefined;
    if (last && last.count > 0) {
      out = {
        ...event,
        metadata: {
          ...event.metadata,
          name: last.name,
          resourceVersion: last.resourceVersion,
        },
        firstTimestamp: last.firstTimestamp,
        count: last.count + 1,
      };
      patch = {
        count: out.count,
        lastTimestamp: out.lastTimestamp,
        message: out.message,
      };
    }
    this.#observed.set(key, {
      count: out.count,
      firstTimestamp: out.firstTimestamp,
      name: out.metadata.name,
      resourceVersion: out.metadata.resourceVersion ?? "",
    });
    return patch ? { event: out, patch } : { event: out };
  }

  #allow(event: Event): boolean {
    const key = spamKey(event);
    const bucket = this.#spam.get(key) ??
      new TokenBucket({ clock: this.#clock }, {
        qps: this.#o.spamQps,
        burst: this.#o.spamBurst,
      });
    this.#spam.set(key, bucket);
    return bucket.tryTake();
  }
}
