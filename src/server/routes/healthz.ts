/**
 * The `/healthz` routes as k8s.io/apiserver's healthz package serves them: `/healthz` runs
 * every check (`ok`, or 500 with one `[+]name ok` / `[-]name failed: reason withheld` line
 * per check), `?verbose` lists the lines on success too, `?exclude=<name>` skips a check, and
 * `/healthz/<name>` runs one check (500 `internal server error: <reason>`).
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { textResponse } from "../http_error.ts";
import type { HttpRequest } from "../http_request.ts";

/** One named health check; it throws (or rejects) with the reason when unhealthy. */
export interface HealthCheck {
  readonly name: string;
  check(): void | Promise<void>;
}

/** The sync loop as the `syncloop` check reads it (kubelet's `LatestLoopEntryTime`). */
export interface SyncLoopActivity {
  /** The latest loop entry time (ms since the epoch); undefined before the loop first ran. */
  latestLoopEntryTime(): number | undefined;
}

/** What the `syncloop` check needs. */
export interface SyncLoopCheckDeps {
  clock: Clock;
  syncLoop: SyncLoopActivity;
  /** `syncFrequency` in ms (kubelet's `ResyncInterval`). */
  resyncIntervalMs: number;
}

/** A route: the request and its parsed URL to a response (never rejects). */
export type Route = (request: HttpRequest, url: URL) => Promise<Response>;

/** The shortest time without a loop iteration that counts as stuck (5 min). */
export const SYNC_LOOP_MIN_STALE_MS = 5 * 60_000;

/** `ping`: always healthy. */
export const pingCheck: HealthCheck = { name: "ping", check() {} };

/**
 * `log`: upstream checks that a klog flush finished in the last 2 min. Our logger writes
 * synchronously, so a blocked log write blocks this answer too; reaching here means logging
 * is not blocked.
 */
export const logCheck: HealthCheck = { name: "log", check() {} };

/**
 * `syncloop`: fails once the loop has not iterated for max(2 × syncFrequency, 5 min); passes
 * before the loop first ran, as upstream.
 */
export function syncLoopCheck(deps: SyncLoopCheckDeps): HealthCheck {
  const limit = Math.max(2 * deps.resyncIntervalMs, SYNC_LOOP_MIN_STALE_MS);
  return {
    name: "syncloop",
    check() {
      const entered = deps.syncLoop.latestLoopEntryTime();
      if (entered !== undefined && deps.clock.now() > entered + limit) {
        throw new Error("sync Loop took longer than expected");
      }
    },
  };
}

async function runCheck(check: HealthCheck): Promise<Error | undefined> {
  try {
    await check.check();
    return undefined;
  } catch (cause) {
    return cause instanceof Error ? cause : new Error(String(cause));
  }
}

/** `/<name>`: every check, with `?verbose` and `?exclude=` (upstream `handleRootHealth`). */
export function aggregateRoute(
  name: string,
  checks: readonly HealthCheck[],
  logger: Logger,
): Route {
  return async (_request, url) => {
    const excluded = new Set(url.searchParams.getAll("exclude"));
    let lines = "";
    let details = "";
    const failed: string[] = [];
    for (const check of checks) {
      if (excluded.delete(check.name)) {
        lines += `[+]${check.name} excluded: ok\n`;
        continue;
      }
      const error = await runCheck(check);
      if (error) {
        // The reason stays out of the body: the port is unauthenticated.
        lines += `[-]${check.name} failed: reason withheld\n`;
        details += `[-]${check.name} failed: ${error.message}\n`;
        failed.push(check.name);
      } else {
        lines += `[+]${check.name} ok\n`;
      }
    }
    if (excluded.size) {
      const names = [...excluded].sort().map((n) => JSON.stringify(n));
      lines += `warn: some health checks cannot be excluded: no matches for ${
        names.join(",")
      }\n`;
      logger.warn("Cannot exclude some health checks", { checks: names });
    }
    if (failed.length) {
      logger.v(2).info("Health check failed", {
        checks: failed.join(","),
        path: name,
        detail: details.trimEnd(),
      });
      return textResponse(500, `${lines}${name} check failed\n`);
    }
    if (!url.searchParams.has("verbose")) return textResponse(200, "ok");
    return textResponse(200, `${lines}${name} check passed\n`);
  };
}

/** `/<name>/<check>`: one check (upstream `adaptCheckToHandler`). */
export function singleCheckRoute(check: HealthCheck): Route {
  return async () => {
    const error = await runCheck(check);
    return error
      ? textResponse(500, `internal server error: ${error.message}\n`)
      : textResponse(200, "ok");
  };
}

/** The `/healthz` route table: the aggregate and one route per check. */
export function healthzRoutes(
  checks: readonly HealthCheck[],
  logger: Logger,
): Map<string, Route> {
  const routes = new Map<string, Route>([
    ["/healthz", aggregateRoute("healthz", checks, logger)],
  ]);
  for (const check of checks) {
    routes.set(`/healthz/${check.name}`, singleCheckRoute(check));
  }
  return routes;
}
