/**
 * Test doubles of the object area: an in-memory {@linkcode ObjectApi} with resourceVersions,
 * per-object watches fed by `put`/`remove`, 403s for chosen names and a call log.
 * @module
 */
import { ApiNotFoundError, ApiStatusError } from "../api/mod.ts";
import type {
  NamedObject,
  ObjectApi,
  ObjectKind,
  ObjectWatchEvent,
  TokenRequest,
} from "../api/mod.ts";

interface Watcher {
  key: string;
  push(event: ObjectWatchEvent): void;
}

/** An in-memory ObjectApi for unit tests. */
export class FakeObjectApi implements ObjectApi {
  readonly calls: { method: string; key: string; body?: unknown }[] = [];
  readonly objects = new Map<string, NamedObject>();
  /** Keys (`kind/ns/name`) answered with 403 Forbidden. */
  readonly forbidden = new Set<string>();
  /** Watches to fail with 410 Gone before they start, per key. */
  readonly failWatches = new Map<string, number>();
  /** Answers of `createToken`, built from the request; override to fail. */
  tokenFor: (ns: string, sa: string, req: TokenRequest, n: number) => string = (
    ns,
    sa,
    _req,
    n,
  ) => `token-${ns}-${sa}-${n}`;
  /** The clock of token expirations (ms). */
  now: () => number = () => Date.now();
  #watchers = new Set<Watcher>();
  #rv = 0;
  #tokens = 0;

  static key(kind: ObjectKind, ns: string, name: string): string {
    return `${kind}/${ns}/${name}`;
  }

  #check(method: string, key: string): void {
    this.calls.push({ method, key });
    if (this.forbidden.has(key)) {
      throw new ApiStatusError(`${key} is forbidden`, {
        code: 403,
        reason: "Forbidden",
      });
    }
  }

  /** Stores (creates or replaces) an object and tells its watchers. */
  put(kind: ObjectKind, object: NamedObject): void {
    const ns = object.metadata.namespace ?? "default";
    const key = FakeObjectApi.key(kind, ns, object.metadata.name ?? "");
    const stored = structuredClone(object);
    stored.metadata.namespace = ns;
    stored.metadata.resourceVersion = String(++this.#rv);
    const type = this.objects.has(key) ? "MODIFIED" : "ADDED";
    this.objects.set(key, stored);
    for (const w of this.#watchers) {
      if (w.key === key) w.push({ type, object: structuredClone(stored) });
    }
  }

  /** Deletes an object and tells its watchers. */
  remove(kind: ObjectKind, ns: string, name: string): void {
    const key = FakeObjectApi.key(kind, ns, name);
    const old = this.objects.get(key);
    if (!old) return;
    this.objects.delete(key);
    const object = structuredClone(old);
    object.metadata.resourceVersion = String(++this.#rv);
    for (const w of this.#watchers) {
      if (w.key === key) w.push({ type: "DELETED", object });
    }
  }

  /** Open watches. */
  get watchCount(): number {
    return this.#watchers.size;
  }

  getObject(kind: ObjectKind, ns: string, name: string): Promise<NamedObject> {
    const key = FakeObjectApi.key(kind, ns, name);
    try {
      this.#check("get", key);
    } catch (e) {
      return Promise.reject(e);
    }
    const o = this.objects.get(key);
    return o ? Promise.resolve(structuredClone(o)) : Promise.reject(
      new ApiNotFoundError(`${kind} "${name}" not found`, {
        code: 404,
        reason: "NotFound",
      }),
    );
  }

  listObject(
    kind: ObjectKind,
    ns: string,
    name: string,
  ): Promise<{ object?: NamedObject; resourceVersion: string }> {
    const key = FakeObjectApi.key(kind, ns, name);
    try {
      this.#check("list", key);
    } catch (e) {
      return Promise.reject(e);
    }
    const o = this.objects.get(key);
    return Promise.resolve({
      ...(o ? { object: structuredClone(o) } : {}),
      resourceVersion: String(this.#rv),
    });
  }

  async *watchObject(
    kind: ObjectKind,
    ns: string,
    name: string,
    _rv: string,
    options: { signal?: AbortSignal },
  ): AsyncIterable<ObjectWatchEvent> {
    const key = FakeObjectApi.key(kind, ns, name);
    this.#check("watch", key);
    const failures = this.failWatches.get(key) ?? 0;
    if (failures > 0) {
      this.failWatches.set(key, failures - 1);
      throw new ApiStatusError("too old resource version", {
        code: 410,
        reason: "Expired",
      });
    }
    const queue: ObjectWatchEvent[] = [];
    let wake: (() => void) | undefined;
    const watcher: Watcher = {
      key,
      push: (e) => {
        queue.push(e);
        wake?.();
      },
    };
    const signal = options.signal;
    const onAbort = () => wake?.();
    signal?.addEventListener("abort", onAbort);
    this.#watchers.add(watcher);
    try {
      while (!signal?.aborted) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        await new Promise<void>((r) => wake = r);
        wake = undefined;
      }
    } finally {
      this.#watchers.delete(watcher);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  createToken(
    ns: string,
    sa: string,
    request: TokenRequest,
  ): Promise<TokenRequest> {
    try {
      this.#check("token", `serviceaccounts/${ns}/${sa}`);
    } catch (e) {
      return Promise.reject(e);
    }
    const n = ++this.#tokens;
    const seconds = request.spec.expirationSeconds ?? 3600;
    return Promise.resolve({
      ...structuredClone(request),
      status: {
        token: this.tokenFor(ns, sa, request, n),
        expirationTimestamp: new Date(this.now() + seconds * 1000)
          .toISOString(),
      },
    });
  }
}
