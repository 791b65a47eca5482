/**
 * The core/v1 Event shape the kubelet writes and the seams of the event recorder: what it
 * records about ({@linkcode ObjectReference}) and where it writes ({@linkcode EventSink},
 * implemented by the API client).
 * @module
 */
import type { Event, EventType, ObjectReference } from "../api/mod.ts";

export type { Event, EventType, ObjectReference };

/** Where events go (client-go's `EventSink`). */
export interface EventSink {
  /** POST to `namespaces/<ns>/events`; rejects with the API error classes. */
  createEvent(event: Event, options?: { signal?: AbortSignal }): Promise<Event>;
  /** Strategic merge patch of an existing event; rejects with `ApiNotFoundError` when gone. */
  patchEvent(
    namespace: string,
    name: string,
    patch: unknown,
    options?: { signal?: AbortSignal },
  ): Promise<Event>;
}

/** What the rest of the kubelet calls: one method, never blocks, never throws. */
export interface EventRecorder {
  event(
    object: ObjectReference,
    type: EventType,
    reason: string,
    message: string,
  ): void;
}
