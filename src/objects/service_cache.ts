/**
 * The kubelet's Service cache (upstream's service informer): every non-headless Service of the
 * cluster, kept by a list/watch, for the service environment variables of containers. It
 * counts as synced once its first LIST has succeeded; API pods wait for that.
 * @module
 */
import { runReflector } from "../api/mod.ts";
import type { Service, ServiceApi } from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";

/** Dependencies of {@linkcode createServiceCache}. */
export interface ServiceCacheDeps {
  api: ServiceApi;
  clock: Clock;
  logger: Logger;
  random?: () => number;
}

/** The cache; `run` keeps it current until the signal aborts. */
export interface ServiceCache {
  hasSynced(): boolean;
  list(): Service[];
  run(signal: AbortSignal): Promise<void>;
}

/** Builds the Service cache; options shorten the loop's timings (tests). */
export function createServiceCache(
  deps: ServiceCacheDeps,
  options: { initialBackOffMs?: number; watchTimeoutSeconds?: number } = {},
): ServiceCache {
  const store = new Map<string, Service>();
  let synced = false;
  const keyOf = (s: Service) =>
    `${s.metadata.namespace ?? ""}/${s.metadata.name ?? ""}`;
  return {
    hasSynced: () => synced,
    list: () => [...store.values()],
    run(signal) {
      return runReflector({
        api: {
          list: (signal) => deps.api.listServices(signal ? { signal } : {}),
          watch: (version, opts) => deps.api.watchServices(version, opts),
        },
        clock: deps.clock,
        logger: deps.logger.with({ component: "services" }),
        ...(deps.random ? { random: deps.random } : {}),
      }, {
        what: "services",
        onList: (items) => {
          store.clear();
          for (const s of items) store.set(keyOf(s), s);
          synced = true;
        },
        onEvent: (event) => {
          if (event.type === "ADDED" || event.type === "MODIFIED") {
            store.set(keyOf(event.object), event.object);
          } else if (event.type === "DELETED") {
            store.delete(keyOf(event.object));
          }
        },
        ...options,
        signal,
      });
    },
  };
}
