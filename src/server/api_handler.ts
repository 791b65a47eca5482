/**
 * The kubelet API's request handler (upstream's `Server` filter chain in
 * pkg/kubelet/server/server.go): canonical path → authenticate → authorize on the
 * (verb, nodes, subresource) attributes → route. Authentication and authorization run before
 * the route table is consulted, so an unauthorized client learns nothing about which paths
 * exist, and any failure on the way denies. The read-only port uses the same table without
 * authentication and only its read-only routes.
 *
 * @module
 */

import type { Logger } from "../log/mod.ts";
import type { Authenticator } from "./auth/authenticate.ts";
import type { Authorizer } from "./auth/authorize.ts";
import { canonicalPath, requestAttributes } from "./auth/request_attributes.ts";
import type { ServerHost } from "./handler.ts";
import { HttpError, textResponse } from "./http_error.ts";
import type { HttpRequest } from "./http_request.ts";
import {
  healthzRoutes,
  logCheck,
  pingCheck,
  type Route,
  syncLoopCheck,
} from "./routes/healthz.ts";
import {
  type ContainerLogsHost,
  containerLogsRoute,
} from "./routes/container_logs.ts";
import {
  type MetricsHost,
  metricsRoute,
  probeMetricsRoute,
} from "./routes/metrics.ts";
import {
  type ResourceMetricsHost,
  resourceMetricsRoute,
} from "./routes/resource_metrics.ts";
import {
  type StatsSummaryHost,
  statsSummaryRoute,
} from "./routes/stats_summary.ts";
import {
  attachRoute,
  execRoute,
  portForwardRoute,
  runRoute,
  type StreamingHost,
} from "./routes/streaming.ts";
import {
  configzRoute,
  type PodsHost,
  podsRoute,
  runningPodsRoute,
} from "./routes/pods.ts";
import {
  disabledNodeLogsRoute,
  NODE_LOGS_PREFIX,
  type NodeLogsHost,
  nodeLogsRoute,
} from "./routes/node_logs.ts";
import { errorMessage } from "../util/error_message.ts";
import {
  type CadvisorMetricsHost,
  cadvisorMetricsRoute,
} from "./routes/cadvisor_metrics.ts";

/** What the kubelet API reads from the kubelet. */
export interface ApiServerHost extends ServerHost, PodsHost {
  nodeName: string;
  /** Container and node figures for `/metrics/resource`; omitted → not served. */
  resourceStats?: ResourceMetricsHost["resourceStats"];
  /** Container and node figures for `/metrics/cadvisor`; omitted → not served. */
  cadvisorStats?: CadvisorMetricsHost["cadvisorStats"];
  /** The runtime's pods and containers for `/metrics`; omitted → not served. */
  runtimeCounts?: MetricsHost["runtimeCounts"];
  /** Container logs; omitted → `/containerLogs/` is not served. */
  logs?: Omit<ContainerLogsHost, "clock">;
  /** Exec, attach, port-forward and run; omitted → not served. */
  streaming?: StreamingHost;
  /** `/stats/summary`; omitted → not served. */
  statsSummary?: StatsSummaryHost["statsSummary"];
  /** The node's log directory for `/logs/`; omitted → not served. */
  nodeLogs?: NodeLogsHost;
}

/** What the transport knows about a request beyond the {@linkcode HttpRequest}. */
export interface RequestInfo {
  /** The request target exactly as received (`/path?query`), before URL normalisation. */
  target: string;
  /** The client's certificate chain (leaf first, DER); empty without one. */
  peerCertificates: readonly Uint8Array[];
}

/** A kubelet API handler; never rejects. */
export type ApiHandler = (
  request: HttpRequest,
  info: RequestInfo,
) => Promise<Response>;

/** Who may call: authentication and authorization, both required together. */
export interface ApiAuth {
  authenticate: Authenticator;
  authorizer: Authorizer;
}

/** Options of {@linkcode createApiHandler}. */
export interface ApiHandlerOptions {
  /** Omitted → the read-only port: no authentication, read-only routes only. */
  auth?: ApiAuth;
  /** `enableDebuggingHandlers` (default true): `/configz`, `/runningpods/`, `/containerLogs/`. */
  enableDebuggingHandlers?: boolean;
  /** `enableSystemLogHandler` (default true): `/logs/`, itself a debugging handler. */
  enableSystemLogHandler?: boolean;
}

interface RouteEntry {
  route: Route;
  methods: readonly string[];
  /** Served only with `enableDebuggingHandlers` and never on the read-only port. */
  debugging: boolean;
}

const READ_METHODS = ["GET", "HEAD"];
const STREAM_METHODS = ["GET", "POST"];

/** The streaming endpoints: prefix, route, methods (upstream registers `/run` for POST only). */
const STREAMING_ROUTES: ReadonlyArray<
  readonly [string, typeof execRoute, readonly string[]]
> = [
  ["/exec/", execRoute, STREAM_METHODS],
  ["/attach/", attachRoute, STREAM_METHODS],
  ["/portForward/", portForwardRoute, STREAM_METHODS],
  ["/run/", runRoute, ["POST"]],
];

function routeTable(host: ApiServerHost): Map<string, RouteEntry> {
  const table = new Map<string, RouteEntry>();
  const checks = [pingCheck, logCheck, syncLoopCheck(host)];
  for (const [path, route] of healthzRoutes(checks, host.logger)) {
    table.set(path, { route, methods: READ_METHODS, debugging: false });
  }
  table.set("/pods", {
    route: podsRoute(host),
    methods: READ_METHODS,
    debugging: false,
  });
  if (host.runtimeCounts) {
    table.set("/metrics", {
      route: metricsRoute({
        nodeName: host.nodeName,
        runtimeCounts: host.runtimeCounts,
      }),
      methods: READ_METHODS,
      debugging: false,
    });
  }
  table.set("/metrics/probes", {
    route: probeMetricsRoute(),
    methods: READ_METHODS,
    debugging: false,
  });
  if (host.resourceStats) {
    table.set("/metrics/resource", {
      route: resourceMetricsRoute({ resourceStats: host.resourceStats }),
      methods: READ_METHODS,
      debugging: false,
    });
  }
  if (host.cadvisorStats) {
    table.set("/metrics/cadvisor", {
      route: cadvisorMetricsRoute({ cadvisorStats: host.cadvisorStats }),
      methods: READ_METHODS,
      debugging: false,
    });
  }
  if (host.statsSummary) {
    table.set("/stats/summary", {
      route: statsSummaryRoute({ statsSummary: host.statsSummary }),
      methods: READ_METHODS,
      debugging: false,
    });
  }
  const running = {
    route: runningPodsRoute(host),
    methods: READ_METHODS,
    debugging: true,
  };
  table.set("/runningpods/", running);
  table.set("/runningpods", running);
  table.set("/configz", {
    route: configzRoute(host),
    methods: READ_METHODS,
    debugging: true,
  });
  return table;
}

/** Routes below a prefix (the rest of the path is the route's parameters). */
function prefixTable(
  host: ApiServerHost,
  options: ApiHandlerOptions = {},
): Array<[string, RouteEntry]> {
  const prefixes: Array<[string, RouteEntry]> = [];
  if (host.nodeLogs) {
    prefixes.push([NODE_LOGS_PREFIX, {
      route: options.enableSystemLogHandler === false
        ? disabledNodeLogsRoute
        : nodeLogsRoute(host.nodeLogs),
      methods: ["GET"],
      debugging: true,
    }]);
  }
  if (host.logs) {
    prefixes.push(["/containerLogs/", {
      route: containerLogsRoute({ ...host.logs, clock: host.clock }),
      methods: READ_METHODS,
      debugging: true,
    }]);
  }
  if (host.streaming) {
    for (const [prefix, route, methods] of STREAMING_ROUTES) {
      prefixes.push([prefix, {
        route: route(host.streaming, prefix),
        methods,
        debugging: true,
      }]);
    }
  }
  return prefixes;
}

/** One served path of the kubelet API, as its security tests enumerate them. */
export interface ApiRouteInfo {
  /** The exact path, or the prefix of a route with parameters. */
  path: string;
  /** Whether `path` is a prefix. */
  prefix: boolean;
  methods: readonly string[];
  /** A debugging handler: off with `enableDebuggingHandlers: false` and on the read-only port. */
  debugging: boolean;
}

/** Every path `host` gets served (the route table, so a new route is in every table-driven test). */
export function apiRoutes(host: ApiServerHost): ApiRouteInfo[] {
  const exact = [...routeTable(host)].map(([path, entry]) => ({
    path,
    prefix: false,
    methods: entry.methods,
    debugging: entry.debugging,
  }));
  const below = prefixTable(host).map(([path, entry]) => ({
    path,
    prefix: true,
    methods: entry.methods,
    debugging: entry.debugging,
  }));
  return [...exact, ...below];
}

/** Builds the handler of the kubelet API (or, without `auth`, of the read-only port). */
export function createApiHandler(
  host: ApiServerHost,
  options: ApiHandlerOptions = {},
): ApiHandler {
  const { logger } = host;
  const table = routeTable(host);
  const prefixes = prefixTable(host, options);
  const lookup = (path: string) =>
    table.get(path) ?? prefixes.find(([p]) => path.startsWith(p))?.[1];
  const debugging = options.enableDebuggingHandlers ?? true;
  return async (request, info) => {
    let response: Response;
    try {
      const path = canonicalPath(info.target);
      if (options.auth) await admit(request, info, path, host, options.auth);
      const entry = lookup(path);
      if (!entry || (entry.debugging && !options.auth)) {
        throw new HttpError(404, "404 page not found");
      }
      if (entry.debugging && !debugging) {
        throw new HttpError(405, "Debug endpoints are disabled.");
      }
      if (!entry.methods.includes(request.method)) {
        throw new HttpError(405, "Method Not Allowed", {
          headers: { allow: entry.methods.join(", ") },
        });
      }
      response = await entry.route(request, new URL(request.url));
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

/** Authenticates and authorizes, or throws the 401/403/500 that ends the request. */
async function admit(
  request: HttpRequest,
  info: RequestInfo,
  path: string,
  host: ApiServerHost,
  auth: ApiAuth,
): Promise<void> {
  const { logger } = host;
  let result;
  try {
    result = await auth.authenticate({
      peerCertificates: info.peerCertificates,
      authorization: request.headers.get("authorization"),
    });
  } catch (cause) {
    logger.error("Unable to authenticate the request", {
      err: errorMessage(cause),
    });
    throw new HttpError(401, "Unauthorized", { cause });
  }
  if (!result.user) {
    logger.v(2).info("Unauthorized request", { path, reason: result.reason });
    throw new HttpError(401, "Unauthorized");
  }
  const user = result.user;
  const attributes = requestAttributes(
    { method: request.method, path },
    host.nodeName,
  );
  const what =
    `user=${user.name}, verb=${attributes.verb}, resource=${attributes.resource}, subresource=${attributes.subresource}`;
  let decision;
  try {
    decision = await auth.authorizer.authorize(user, attributes);
  } catch (cause) {
    logger.error("Authorization error", {
      user: user.name,
      verb: attributes.verb,
      subresource: attributes.subresource,
      err: errorMessage(cause),
    });
    throw new HttpError(500, `Authorization error (${what})`, { cause });
  }
  if (!decision.allowed) {
    logger.v(2).info("Forbidden request", {
      user: user.name,
      verb: attributes.verb,
      subresource: attributes.subresource,
      path,
      reason: decision.reason,
    });
    throw new HttpError(403, `Forbidden (${what})`);
  }
}

function errorResponse(error: unknown, logger: Logger): Response {
  if (error instanceof HttpError) return error.toResponse();
  logger.error("HTTP handler failed", {
    err: errorMessage(error),
  });
  return textResponse(500, "Internal Server Error\n");
}
