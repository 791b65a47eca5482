/**
 * The healthz listener's request handler: an explicit route table (only `/healthz`,
 * `/healthz/ping`, `/healthz/log`, `/healthz/syncloop`; nothing else is served on this
 * unauthenticated port, CVE-2019-11248) and the server's one error-to-response mapping.
 *
 * Upstream's 10248 mux (`cmd/kubelet/app/server.go`) installs `healthz.InstallHandler(mux)`
 * with no checks, i.e. only `ping`; `log` and `syncloop` live on its 10250 API. We serve all
 * three here so a local probe also notices a stuck sync loop; the bodies follow upstream.
 *
 * @module
 */

import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { HttpError, textResponse } from "./http_error.ts";
import type { HttpRequest } from "./http_request.ts";
import {
  healthzRoutes,
  logCheck,
  pingCheck,
  type Route,
  type SyncLoopActivity,
  syncLoopCheck,
} from "./routes/healthz.ts";
import { errorMessage } from "../util/error_message.ts";

/** What the healthz handler reads from the kubelet (a narrow subset of upstream's `HostInterface`). */
export interface ServerHost {
  clock: Clock;
  logger: Logger;
  /** When the sync loop last iterated. */
  syncLoop: SyncLoopActivity;
  /** `syncFrequency` in ms. */
  resyncIntervalMs: number;
}

const ALLOWED_METHODS = ["GET", "HEAD"];

/** Builds the healthz handler: a plain `(HttpRequest) => Promise<Response>` that never rejects. */
export function createHandler(
  host: ServerHost,
): (request: HttpRequest) => Promise<Response> {
  const { logger } = host;
  const routes: ReadonlyMap<string, Route> = healthzRoutes(
    [pingCheck, logCheck, syncLoopCheck(host)],
    logger,
  );
  return async (request) => {
    let response: Response;
    try {
      const url = new URL(request.url);
      const route = routes.get(url.pathname);
      if (!route) throw new HttpError(404, "404 page not found");
      if (!ALLOWED_METHODS.includes(request.method)) {
        throw new HttpError(405, "Method Not Allowed", {
          headers: { allow: ALLOWED_METHODS.join(", ") },
        });
      }
      response = await route(request, url);
    } catch (error) {
      response = errorResponse(error, logger);
    }
    if (request.method !== "HEAD") return response;
    await response.body?.cancel();
    return new Response(null, {
      status: response.status,
      headers: response.headers,
    });
  };
}

function errorResponse(error: unknown, logger: Logger): Response {
  if (error instanceof HttpError) return error.toResponse();
  logger.error("HTTP handler failed", {
    err: errorMessage(error),
  });
  return textResponse(500, "Internal Server Error\n");
}
