/**
 * The core/v1 Event shape the kubelet writes and the seams of the event recorder: what it
 * records about ({@linkcode ObjectReference}) and where it writes ({@linkcode EventSink},
 * implemented by the API client).
 * @module
 */

/** `v1.ObjectReference`: the object an event is about. */
export interface ObjectReference {
  kind: string;
  apiVersion?: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  /** e.g. `spec.containers{app}` for a container of a pod. */
  fieldPath?: string;
}

/** `Normal` or `Warning` (the only types client-go accepts). */
export type EventType = "Normal" | "Warning";

/** `v1.Event` (legacy core/v1 events, as client-go's `record` package writes them). */
export interface Event {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    uid?: string;
  };
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  source: { component: string; host: string };
  /** RFC 3339, seconds. */
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  type: EventType;
  reportingComponent: string;
  reportingInstance: string;
}

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
