/** Test doubles of the events area. Import only from tests. */
import { ApiNotFoundError, type ApiStatusError } from "../api/mod.ts";
import type {
  Event,
  EventRecorder,
  EventSink,
  EventType,
  ObjectReference,
} from "./types.ts";

/** An in-memory event store with a call log and queued errors. */
export class FakeEventSink implements EventSink {
  readonly events = new Map<string, Event>();
  readonly calls: {
    method: "create" | "patch";
    name: string;
    body: unknown;
  }[] = [];
  #errors: (ApiStatusError | Error)[] = [];
  #rv = 0;

  /** The next call fails with `error`. */
  injectError(error: ApiStatusError | Error): void {
    this.#errors.push(error);
  }

  createEvent(event: Event): Promise<Event> {
    this.calls.push({
      method: "create",
      name: event.metadata.name,
      body: structuredClone(event),
    });
    const error = this.#errors.shift();
    if (error) return Promise.reject(error);
    const stored = structuredClone(event);
    stored.metadata.resourceVersion = String(++this.#rv);
    this.events.set(
      `${event.metadata.namespace}/${event.metadata.name}`,
      stored,
    );
    return Promise.resolve(structuredClone(stored));
  }

  patchEvent(namespace: string, name: string, patch: unknown): Promise<Event> {
    this.calls.push({ method: "patch", name, body: structuredClone(patch) });
    const error = this.#errors.shift();
    if (error) return Promise.reject(error);
    const old = this.events.get(`${namespace}/${name}`);
    if (!old) {
      return Promise.reject(
        new ApiNotFoundError(`events "${name}" not found`, { code: 404 }),
      );
    }
    const stored = { ...old, ...(patch as Partial<Event>) };
    stored.metadata = { ...old.metadata, resourceVersion: String(++this.#rv) };
    this.events.set(`${namespace}/${name}`, stored);
    return Promise.resolve(structuredClone(stored));
  }
}

/** A recorder that keeps what it was given, for tests of the code that records events. */
export class RecordedEvents implements EventRecorder {
  readonly events: {
    object: ObjectReference;
    type: EventType;
    reason: string;
    message: string;
  }[] = [];

  event(
    object: ObjectReference,
    type: EventType,
    reason: string,
    message: string,
  ): void {
    this.events.push({ object, type, reason, message });
  }

  /** `reason: message` lines, in order. */
  lines(): string[] {
    return this.events.map((e) => `${e.reason}: ${e.message}`);
  }
}
