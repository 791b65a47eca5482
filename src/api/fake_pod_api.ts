/**
 * An in-memory {@linkcode PodApi} for unit tests: pods with resourceVersions, a watch that
 * replays events after a version, compaction (410 for versions older than the last
 * `compact()`), `disconnectWatches()` to end every open watch, the UID preconditions of status
 * patches and deletes (409), graceful deletion, queued errors per method and a call log.
 * @module
 */
import type { Pod, PodCondition, PodStatus } from "./core_v1.ts";
import {
  ApiConflictError,
  ApiNotFoundError,
  ApiStatusError,
} from "./errors.ts";
import { applyMergePatch } from "./fake_api_server.ts";
import type {
  PodApi,
  PodDeleteOptions,
  PodList,
  PodListOptions,
  PodWatchEvent,
  PodWatchOptions,
} from "./pod_api.ts";

type Method = keyof PodApi;

interface Logged {
  rv: number;
  event: PodWatchEvent;
}

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function matches(pod: Pod, fieldSelector: string): boolean {
  const m = /^spec\.nodeName=(.*)$/.exec(fieldSelector);
  return !m || pod.spec.nodeName === m[1];
}

/** The in-memory pod API. */
export class FakePodApi implements PodApi {
  readonly calls: { method: Method; name: string; body?: unknown }[] = [];
  readonly pods = new Map<string, Pod>();
  #errors = new Map<Method, ApiStatusError[]>();
  #log: Logged[] = [];
  #rv = 0;
  #uid = 0;
  #compactedAt = 0;
  #wake = new Set<() => void>();
  #disconnects = new Set<() => void>();

  /** Queues `error` for the next call of `method`. */
  injectError(method: Method, error: ApiStatusError): void {
    this.#errors.set(method, [...(this.#errors.get(method) ?? []), error]);
  }

  /** Creates or replaces a pod (as another client would) and emits its watch event. */
  put(pod: Pod): Pod {
    const stored = structuredClone(pod);
    const k = key(
      stored.metadata.namespace ?? "default",
      stored.metadata.name!,
    );
    const old = this.pods.get(k);
    stored.metadata.namespace ??= "default";
    stored.metadata.uid ??= old?.metadata.uid ?? `uid-${++this.#uid}`;
    this.#store(k, stored, old ? "MODIFIED" : "ADDED");
    return structuredClone(stored);
  }

  /** Removes a pod at once (as a force delete) and emits DELETED. */
  remove(namespace: string, name: string): void {
    const k = key(namespace, name);
    const old = this.pods.get(k);
    if (!old) return;
    this.pods.delete(k);
    old.metadata.resourceVersion = String(++this.#rv);
    this.#emit({ type: "DELETED", object: old });
  }

  /** Forgets the event history: watches from older versions get 410 Gone. */
  compact(): void {
    this.#compactedAt = this.#rv;
    this.#log = [];
  }

  /** Ends every open watch stream (a dropped connection). */
  disconnectWatches(): void {
    for (const d of [...this.#disconnects]) d();
  }

  /** Sends a BOOKMARK with the current version to open watches. */
  bookmark(): void {
    this.#emit({
      type: "BOOKMARK",
      object: {
        metadata: { resourceVersion: String(this.#rv) },
        spec: { containers: [] },
      },
    });
  }

  #enter(method: Method, name: string, body?: unknown): Promise<void> {
    this.calls.push({ method, name, ...(body === undefined ? {} : { body }) });
    const error = this.#errors.get(method)?.shift();
    return error ? Promise.reject(error) : Promise.resolve();
  }

  #store(k: string, pod: Pod, type: "ADDED" | "MODIFIED"): void {
    pod.metadata.resourceVersion = String(++this.#rv);
    this.pods.set(k, pod);
    this.#emit({ type, object: structuredClone(pod) });
  }

  #emit(event: PodWatchEvent): void {
    this.#log.push({ rv: this.#rv, event });
    for (const w of [...this.#wake]) w();
  }

  #get(namespace: string, name: string): Pod {
    const pod = this.pods.get(key(namespace, name));
    if (!pod) {
      throw new ApiNotFoundError(`pods "${name}" not found`, {
        code: 404,
        reason: "NotFound",
      });
    }
    return pod;
  }

  async listPods(query: PodListOptions): Promise<PodList> {
    await this.#enter("listPods", query.fieldSelector);
    return {
      metadata: { resourceVersion: String(this.#rv) },
      items: [...this.pods.values()].filter((p) =>
        matches(p, query.fieldSelector)
      ).map((p) => structuredClone(p)),
    };
  }

  async *watchPods(
    query: PodWatchOptions,
    options?: { signal?: AbortSignal },
  ): AsyncIterable<PodWatchEvent> {
    await this.#enter("watchPods", query.resourceVersion);
    let from = Number(query.resourceVersion);
    if (from < this.#compactedAt) {
      throw new ApiStatusError("too old resource version", {
        code: 410,
        reason: "Expired",
      });
    }
    let ended = false;
    let wake = () => {};
    const end = () => {
      ended = true;
      wake();
    };
    this.#disconnects.add(end);
    options?.signal?.addEventListener("abort", end, { once: true });
    try {
      while (!ended) {
        const due = this.#log.filter((l) => l.rv > from);
        for (const l of due) {
          from = l.rv;
          const pod = l.event.object;
          if (
            l.event.type === "BOOKMARK" || matches(pod, query.fieldSelector)
          ) {
            yield structuredClone(l.event);
          }
          if (ended) return;
        }
        if (due.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            this.#wake.add(resolve);
          });
          this.#wake.delete(wake);
        }
      }
    } finally {
      this.#disconnects.delete(end);
      this.#wake.delete(wake);
    }
  }

  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    await this.#enter("getPod", name);
    const pod = this.pods.get(key(namespace, name));
    return pod ? structuredClone(pod) : undefined;
  }

  async patchPodStatus(
    namespace: string,
    name: string,
    patch: unknown,
  ): Promise<Pod> {
    await this.#enter("patchPodStatus", name, structuredClone(patch));
    const pod = this.#get(namespace, name);
    const p = (patch ?? {}) as {
      metadata?: { uid?: string };
      status?: unknown;
    };
    if (p.metadata?.uid && p.metadata.uid !== pod.metadata.uid) {
      throw new ApiConflictError(
        `Precondition failed: UID in precondition: ${p.metadata.uid}, UID in object meta: ${pod.metadata.uid}`,
        { code: 409, reason: "Conflict" },
      );
    }
    const next = structuredClone(pod);
    next.status = applyMergePatch(
      pod.status ?? {},
      p.status ?? {},
    ) as PodStatus;
    // conditions are a list merged by type
    const patched = (p.status as PodStatus | undefined)?.conditions;
    if (patched) {
      next.status.conditions = [
        ...(pod.status?.conditions ?? []).filter((c) =>
          !patched.some((n) => n.type === c.type)
        ),
        ...patched.map((n) =>
          applyMergePatch(
            pod.status?.conditions?.find((c) => c.type === n.type) ?? {},
            n,
          ) as PodCondition
        ),
      ];
    }
    this.#store(key(namespace, name), next, "MODIFIED");
    return structuredClone(next);
  }

  async deletePod(
    namespace: string,
    name: string,
    del: PodDeleteOptions,
  ): Promise<void> {
    await this.#enter("deletePod", name, structuredClone(del));
    const pod = this.#get(namespace, name);
    if (pod.metadata.uid !== del.uid) {
      throw new ApiConflictError(
        `Precondition failed: UID in precondition: ${del.uid}, UID in object meta: ${pod.metadata.uid}`,
        { code: 409, reason: "Conflict" },
      );
    }
    if (del.gracePeriodSeconds === 0) {
      this.remove(namespace, name);
      return;
    }
    const next = structuredClone(pod);
    next.metadata.deletionTimestamp ??= new Date(0).toISOString();
    next.metadata.deletionGracePeriodSeconds = del.gracePeriodSeconds;
    this.#store(key(namespace, name), next, "MODIFIED");
  }
}
