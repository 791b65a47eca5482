/**
 * The API server pod source (upstream `config/apiserver.go`, a reflector): lists the pods
 * bound to this node (`fieldSelector=spec.nodeName=<node>`, all namespaces), then watches from
 * the list's resourceVersion with bookmarks. Every change reports the full set of pods, so the
 * same `PodConfig` merge as the static sources turns it into ADD/UPDATE/REMOVE.
 *
 * - The list/watch loop is `runReflector` (src/api): a watch the server ends resumes from the
 *   last version seen, failures back off (0.8 s doubling to 30 s), 410 Gone relists.
 * - Mirror pods (annotation `kubernetes.io/config.mirror`) are API copies of static pods and are
 *   never run; they go to `onMirrorPods` instead.
 *
 * @module
 */

import type { PodApi } from "../../api/mod.ts";
import { runReflector } from "../../api/mod.ts";
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { CONFIG_MIRROR_ANNOTATION } from "../static/static_pod.ts";
import type { Pod } from "../types.ts";
import type { PodSource } from "./file_source.ts";
import { errorMessage } from "../../util/error_message.ts";

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

  const replace = (pods: Pod[]) => {
    store.clear();
    for (const pod of pods) store.set(keyOf(pod), pod);
    report();
  };

  const message = (e: unknown) => errorMessage(e);

  return {
    name: "api",
    async refresh() {
      try {
        replace((await api.listPods({ fieldSelector })).items);
        return [...store.values()];
      } catch (cause) {
        log.error("Listing pods failed", { err: message(cause) });
        return undefined;
      }
    },
    run(signal) {
      return runReflector({
        api: {
          list: async (signal) => {
            const list = await api.listPods(
              { fieldSelector },
              signal ? { signal } : {},
            );
            return {
              items: list.items,
              resourceVersion: list.metadata.resourceVersion ?? "",
            };
          },
          watch: (resourceVersion, { timeoutSeconds, signal }) =>
            api.watchPods(
              { fieldSelector, resourceVersion, timeoutSeconds },
              { signal },
            ),
        },
        clock,
        logger: log,
        random,
      }, {
        what: "pods",
        onList: replace,
        onEvent: (event) => {
          const pod = event.object;
          if (event.type === "ADDED" || event.type === "MODIFIED") {
            store.set(keyOf(pod), pod);
          } else if (event.type === "DELETED") {
            store.delete(keyOf(pod));
          }
          if (event.type !== "BOOKMARK") report();
        },
        initialBackOffMs: options.initialBackOffMs ?? 800,
        maxBackOffMs: options.maxBackOffMs ?? 30_000,
        watchTimeoutSeconds: options.watchTimeoutSeconds ?? 300,
        signal,
      });
    },
  };
}
