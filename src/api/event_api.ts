/**
 * core/v1 Events as the kubelet writes them (client-go's `record` package: legacy core/v1
 * events, not events.k8s.io), and {@linkcode RestEventApi}: POST to `namespaces/<ns>/events`
 * and a strategic merge patch of a repeated event's count and time.
 * @module
 */
import { STRATEGIC_MERGE_PATCH } from "./kube_api_client.ts";
import type { RestClient } from "./rest_client.ts";
import type { ApiCallOptions } from "./types.ts";

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

/** `v1.Event`, the fields the kubelet writes. */
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

function eventsPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}

/** Event writes over a REST client. */
export class RestEventApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  /** Rejects with `ApiAlreadyExistsError` when the name is taken. */
  createEvent(event: Event, options?: ApiCallOptions): Promise<Event> {
    return this.#rest.request<Event>({
      method: "POST",
      path: eventsPath(event.metadata.namespace),
      body: { apiVersion: "v1", kind: "Event", ...event },
      ...(options?.signal ? { signal: options.signal } : {}),
    });
  }

  /** Rejects with `ApiNotFoundError` when the event is gone (expired after its TTL). */
  patchEvent(
    namespace: string,
    name: string,
    patch: unknown,
    options?: ApiCallOptions,
  ): Promise<Event> {
    return this.#rest.request<Event>({
      method: "PATCH",
      path: `${eventsPath(namespace)}/${encodeURIComponent(name)}`,
      body: patch,
      contentType: STRATEGIC_MERGE_PATCH,
      ...(options?.signal ? { signal: options.signal } : {}),
    });
  }
}
