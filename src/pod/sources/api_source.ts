/**
 * The API server pod source (upstream `config/apiserver.go`, a reflector): lists the pods
 * bound to this node (`fieldSelector=spec.nodeName=<node>`, all namespaces), then watches from
 * the list's resourceVersion with bookmarks. Every change reports the full set of pods, so the
 * same `PodConfig` merge as the static sources turns it into ADD/UPDATE/REMOVE.
 *
 * - A watch the server ends (its timeout, a dropped connection) resumes from the last version
 *   seen; failures back off (0.8 s doubling to 30 s, as client-go's reflector).
 * - 410 Gone (the version was compacted away) relists.
 * - Mirror pods (annotation `kubernetes.io/config.mirror`) are API copies of static pods and are
 *   never run; they go to `onMirrorPods` instead.
 *
 * @module
 */

import type { PodApi } from "../../api/mod.ts";
import { ApiStatusError } from "../../api/mod.ts";
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { CONFIG_MIRROR_ANNOTATION } from "../static_pod.ts";
import type { Pod } from "../types.ts";
import type { PodSource } from "./file_source.ts";

/** Dependencies of {@linkcode createApiSource}. */
export interface ApiSourceDeps {
  api: Pick<PodApi, "listPods" | "watchPods">;
  clock: Clock;
  logger: Logger;
  /** Jitter source (default `Math.random`). */
  random?: () => number;
}

/** Options of {@linkcode createApiSource}. */
export interface ApiSourceOptions {
  nodeName: string;
  /** Every pod bound to the node except mirror pods, after each change. */
  onSnapshot: (pods: Pod[]) => void;
  /** The node's mirror pods, after each change (for the mirror pod manager). */
  onMirrorPods?: (pods: Pod[]) => void;
  /** First back-off after a failure (default 800 ms). */
  initialBackOffMs?: number;
  /** Back-off cap (default 30 s). */
  maxBackOffMs?: number;
  /** Server-side watch timeout, before jitter of up to 100 % (default 300 s). */
  watchTimeoutSeconds?: number;
}

/** Creates the API server source. */
export function createApiSource(
  deps: ApiSourceDeps,
  options: ApiSourceOptions,
): PodSource {
  const { api, clock } = deps;
  const log = deps.logger.with({ source: "api" });
  const random = deps.random ?? Math.random;
  const fieldSelector = `spec.nodeName=${options.nodeName}`;
  const initialBackOff = options.initialBackOffMs ?? 800;
  const maxBackOff = options.maxBackOffMs ?? 30_000;
  const watchTimeout = options.watchTimeoutSeconds ?? 300;
  /** The store, by namespace/name (as the reflector's). */
  const store = new Map<string, Pod>();

  const keyOf = (pod: Pod) =>
    `${pod.metadata.namespace ?? "default"}/${pod.metadata.name ?? ""}`;
  const report = () => {
    const all = [...store.values()];
    const isMirror = (p: Pod) =>
      p.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined;
    options.onSnapshot(all.filter((p) => !isMirror(p)));
    options.onMirrorPods?.(all.filter(isMirror));
  };

  /** Lists into the store and reports; returns the list's version. */
  async function list(signal?: AbortSignal): Promise<string> {
    const result = await api.listPods(
      { fieldSelector },
      signal ? { signal } : {},
    );
    store.clear();
    for (const pod of result.items) store.set(keyOf(pod), pod);
    report();
    return result.metadata.resourceVersion ?? "";
  }

  /** Watches from `version` until the stream ends; returns the last version and the count. */
  async function watch(
    version: string,
    signal: AbortSignal,
  ): Promise<{ version: string; events: number }> {
    let events = 0;
    const stream = api.watchPods({
      fieldSelector,
      resourceVersion: version,
      timeoutSeconds: Math.floor(watchTimeout * (1 + random())),
    }, { signal });
    for await (const event of stream) {
      events++;
      const pod = event.object;
      if (event.type === "ADDED" || event.type === "MODIFIED") {
        store.set(keyOf(pod), pod);
      } else if (event.type === "DELETED") {
        store.delete(keyOf(pod));
      }
      version = pod.metadata.resourceVersion ?? version;
      if (event.type !== "BOOKMARK") report();
    }
    return { version, events };
  }

  const message = (e: unknown) => e instanceof Error ? e.message : String(e);

  return {
    name: "api",
    async refresh() {
      try {
        await list();
        return [...store.values()];
      } catch (cause) {
        log.error("Listing pods failed", { err: message(cause) });
        return undefined;
      }
    },
    async run(signal) {
      let backOff = initialBackOff;
      const pause = async () => {
        const ms = backOff * (1 + random() * 0.1);
        backOff = Math.min(backOff * 2, maxBackOff);
        await clock.sleep(ms, signal).catch(() => {});
      };
      while (!signal.aborted) {
        let version: string;
        try {
          version = await list(signal);
        } catch (cause) {
          if (signal.aborted) break;
          log.error("Listing pods failed", { err: message(cause) });
          await pause();
          continue;
        }
        while (!signal.aborted) {
          try {
            const result = await watch(version, signal);
            version = result.version;
            // A stream closed before any event (a proxy cutting it) must not spin.
            if (result.events === 0) await pause();
            else backOff = initialBackOff;
          } catch (cause) {
            if (signal.aborted) break;
            if (cause instanceof ApiStatusError && cause.code === 410) {
              log.info("Watch version expired; relisting", {
                resourceVersion: version,
              });
              break;
            }
            log.error("Watching pods failed; resuming", {
              err: message(cause),
              resourceVersion: version,
            });
            await pause();
          }
        }
      }
    },
  };
}
