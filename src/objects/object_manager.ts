/**
 * The ConfigMaps and Secrets of the pods on this node, kept as upstream's
 * `configMapAndSecretChangeDetectionStrategy` says:
 *
 * - `Watch` (default): one LIST+WATCH per referenced object, narrowed with
 *   `fieldSelector=metadata.name=<name>`, started when the first registered pod references it
 *   and stopped when the last one goes; an immutable object is not watched further.
 * - `Cache`: GET on demand, answers kept for a TTL (1 min) and dropped when a pod using them is
 *   registered again (created or updated).
 * - `Get`: GET on every read.
 *
 * Every read names one object a pod of this node references, which is what the Node
 * authorizer allows. Reads of objects no registered pod references go to the API server
 * directly (upstream fails them instead).
 * @module
 */
import { ApiNotFoundError, ApiStatusError } from "../api/mod.ts";
import type { NamedObject, ObjectApi, ObjectKind } from "../api/mod.ts";
import type { Pod } from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { podReferences } from "./pod_references.ts";

/** `configMapAndSecretChangeDetectionStrategy`. */
export type ChangeDetectionStrategy = "Watch" | "Cache" | "Get";

/** Reads a pod's ConfigMaps and Secrets; what volume, env and pull-secret code calls. */
export interface ObjectGetter {
  /**
   * The object; rejects with `ApiNotFoundError` (`configmap "x" not found`, upstream's text)
   * or the API server's error (e.g. 403).
   */
  get(
    kind: ObjectKind,
    namespace: string,
    name: string,
    signal?: AbortSignal,
  ): Promise<NamedObject>;
}

/** The manager the pod sources feed (upstream `RegisterPod`/`UnregisterPod`). */
export interface PodObjectManager extends ObjectGetter, Disposable {
  /** Starts tracking what `pod` references (again, for an updated pod). Never blocks. */
  registerPod(pod: Pod): void;
  /** Stops tracking what only `pod` referenced. */
  unregisterPod(pod: Pod): void;
  /** Stops every watch. */
  close(): void;
}

/** Options of {@linkcode createPodObjectManager}. */
export interface PodObjectManagerOptions {
  strategy?: ChangeDetectionStrategy;
  /** `Cache` TTL (upstream default 1 min). */
  ttlMs?: number;
  /** How long a read waits for a new watch's first LIST (upstream polls for 1 s). */
  syncWaitMs?: number;
  /** Server-side watch timeout; the watch is reopened after it. */
  watchTimeoutSeconds?: number;
}

const SINGULAR: Record<ObjectKind, string> = {
  configmaps: "configmap",
  secrets: "secret",
};

/** The not-found error upstream's object managers return. */
export function objectNotFound(
  kind: ObjectKind,
  name: string,
): ApiNotFoundError {
  return new ApiNotFoundError(`${SINGULAR[kind]} "${name}" not found`, {
    code: 404,
    reason: "NotFound",
  });
}

function keyOf(kind: ObjectKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

function referenceKeys(pod: Pod): Set<string> {
  const ns = pod.metadata.namespace ?? "default";
  const refs = podReferences(pod);
  return new Set([
    ...[...refs.configmaps].map((n) => keyOf("configmaps", ns, n)),
    ...[...refs.secrets].map((n) => keyOf("secrets", ns, n)),
  ]);
}

function splitKey(key: string): [ObjectKind, string, string] {
  const [kind, namespace, ...rest] = key.split("/");
  return [kind as ObjectKind, namespace!, rest.join("/")];
}

interface Entry {
  refs: number;
  /** Last answer: the object, or the error reading it. */
  value?: { object?: NamedObject; error?: unknown };
  fetchedAt: number;
  synced: PromiseWithResolvers<void>;
  stop?: AbortController;
}

/** Builds the manager for `strategy` (default `Watch`). */
export function createPodObjectManager(
  deps: { api: ObjectApi; clock: Clock; logger: Logger },
  options: PodObjectManagerOptions = {},
): PodObjectManager {
  const strategy = options.strategy ?? "Watch";
  const ttlMs = options.ttlMs ?? 60_000;
  const syncWaitMs = options.syncWaitMs ?? 1_000;
  const entries = new Map<string, Entry>();
  const podKeys = new Map<string, Set<string>>();
  const { api, clock, logger } = deps;

  const fetchOnce = async (
    kind: ObjectKind,
    ns: string,
    name: string,
    signal?: AbortSignal,
  ): Promise<NamedObject> => {
    try {
      return await api.getObject(kind, ns, name, signal ? { signal } : {});
    } catch (e) {
      if (e instanceof ApiNotFoundError) throw objectNotFound(kind, name);
      throw e;
    }
  };

  /** One object's LIST+WATCH loop until `stop` aborts. */
  const reflect = async (key: string, entry: Entry, stop: AbortSignal) => {
    const [kind, ns, name] = splitKey(key);
    let delayMs = 0;
    while (!stop.aborted) {
      let listing = true;
      try {
        if (delayMs > 0) await clock.sleep(delayMs, stop);
        const list = await api.listObject(kind, ns, name, { signal: stop });
        listing = false;
        entry.value = list.object
          ? { object: list.object }
          : { error: objectNotFound(kind, name) };
        entry.synced.resolve();
        delayMs = 0;
        if (list.object?.immutable) return;
        let rv = list.resourceVersion;
        for (;;) {
          let relist = false;
          for await (
            const ev of api.watchObject(kind, ns, name, rv, {
              signal: stop,
              ...(options.watchTimeoutSeconds
                ? { timeoutSeconds: options.watchTimeoutSeconds }
                : {}),
            })
          ) {
            if (ev.type === "ERROR") {
              relist = true; // 410 Gone and friends: start over with a LIST
              break;
            }
            rv = ev.object.metadata.resourceVersion ?? rv;
            if (ev.type === "BOOKMARK") continue;
            entry.value = ev.type === "DELETED"
              ? { error: objectNotFound(kind, name) }
              : { object: ev.object };
            if (ev.type !== "DELETED" && ev.object.immutable) return;
          }
          if (relist || stop.aborted) break;
        }
      } catch (e) {
        if (stop.aborted) return;
        // a failed LIST is what reads see; a broken watch keeps the last answer (relisted)
        if (!entry.value || (listing && e instanceof ApiStatusError)) {
          entry.value = { error: e };
          entry.synced.resolve();
        }
        delayMs = Math.min(Math.max(delayMs * 2, 500), 30_000);
        logger.v(2).info("Object watch failed, retrying", {
          object: key,
          err: String(e),
          retryInMs: delayMs,
        });
      }
    }
  };

  const acquire = (key: string) => {
    let entry = entries.get(key);
    if (!entry) {
      entry = { refs: 0, fetchedAt: 0, synced: Promise.withResolvers() };
      entries.set(key, entry);
    }
    entry.refs++;
    if (strategy === "Watch" && !entry.stop) {
      const stop = new AbortController();
      entry.stop = stop;
      reflect(key, entry, stop.signal).catch((e) =>
        logger.error("Object watch stopped", { object: key, err: String(e) })
      );
    }
  };

  const release = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    if (--entry.refs > 0) return;
    entry.stop?.abort();
    entries.delete(key);
  };

  const readEntry = async (
    entry: Entry,
    kind: ObjectKind,
    ns: string,
    name: string,
    signal?: AbortSignal,
  ): Promise<NamedObject> => {
    if (strategy === "Watch") {
      if (!entry.value) {
        const timeout = AbortSignal.timeout(syncWaitMs);
        const wait = signal ? AbortSignal.any([signal, timeout]) : timeout;
        await Promise.race([
          entry.synced.promise,
          new Promise((_, reject) =>
            wait.addEventListener("abort", () => reject(wait.reason), {
              once: true,
            })
          ),
        ]).catch(() => {
          signal?.throwIfAborted();
          throw new Error(
            `failed to sync ${
              SINGULAR[kind]
            } cache: timed out waiting for the condition`,
          );
        });
      }
    } else if (
      strategy === "Get" || !entry.value ||
      clock.now() - entry.fetchedAt >= ttlMs
    ) {
      try {
        entry.value = { object: await fetchOnce(kind, ns, name, signal) };
      } catch (e) {
        signal?.throwIfAborted();
        entry.value = { error: e };
      }
      entry.fetchedAt = clock.now();
    }
    const value = entry.value!;
    if (value.object) return value.object;
    throw value.error;
  };

  const close = () => {
    for (const entry of entries.values()) entry.stop?.abort();
    entries.clear();
    podKeys.clear();
  };

  return {
    registerPod(pod) {
      const uid = pod.metadata.uid ?? "";
      const next = referenceKeys(pod);
      const prev = podKeys.get(uid) ?? new Set<string>();
      podKeys.set(uid, next);
      for (const key of next) acquire(key);
      for (const key of prev) release(key);
      if (strategy === "Cache") {
        for (const key of next) {
          const e = entries.get(key);
          if (e) delete e.value;
        }
      }
    },
    unregisterPod(pod) {
      const uid = pod.metadata.uid ?? "";
      for (const key of podKeys.get(uid) ?? []) release(key);
      podKeys.delete(uid);
    },
    get(kind, namespace, name, signal) {
      const entry = entries.get(keyOf(kind, namespace, name));
      if (!entry) return fetchOnce(kind, namespace, name, signal);
      return readEntry(entry, kind, namespace, name, signal);
    },
    close,
    [Symbol.dispose]: close,
  };
}

/**
 * Feeds a pod source's updates to the manager (upstream's pod manager registers pods as they
 * are added or updated and unregisters them when removed): `SET` replaces the source's pods,
 * unregistering those no longer in it.
 */
export function podUpdateRegistrar(
  manager: Pick<PodObjectManager, "registerPod" | "unregisterPod">,
  options: { onRemoved?: (pod: Pod) => void } = {},
): (update: { op: string; pods: Pod[] }) => void {
  const known = new Map<string, Pod>();
  const remove = (pod: Pod) => {
    manager.unregisterPod(pod);
    known.delete(pod.metadata.uid ?? "");
    options.onRemoved?.(pod);
  };
  return ({ op, pods }) => {
    // a status change references nothing new
    if (op === "RECONCILE") return;
    if (op === "REMOVE") {
      pods.forEach(remove);
      return;
    }
    if (op === "SET") {
      const next = new Set(pods.map((p) => p.metadata.uid ?? ""));
      for (const [uid, pod] of known) {
        if (!next.has(uid)) remove(pod);
      }
    }
    for (const pod of pods) {
      manager.registerPod(pod);
      known.set(pod.metadata.uid ?? "", pod);
    }
  };
}
