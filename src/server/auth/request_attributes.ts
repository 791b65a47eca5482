/**
 * From a request to the authorization question the kubelet API asks: one canonical path (or a
 * 400), then (verb, `nodes`, subresource, node name) after upstream's
 * `nodeAuthorizerAttributesGetter.GetRequestAttributes` (pkg/kubelet/server/auth.go).
 *
 * Two deliberate differences, both stricter:
 * - paths are never cleaned into something else: a path with `//`, a `.` or `..` segment, an
 *   encoded `/`, `\` or `%`, a NUL or an invalid escape is refused with 400 before any check,
 *   so the path that is authorized is always the path that is routed (Go's `ServeMux` would
 *   redirect such paths instead);
 * - `/exec`, `/attach`, `/run` and `/portForward` need `create` whatever the method: upstream
 *   still authorizes a WebSocket upgrade (a GET) with `get`, which lets `get nodes/proxy` run
 *   commands in containers.
 *
 * @module
 */

import { HttpError } from "../http_error.ts";

/** What the authorizer is asked (a `SubjectAccessReview`'s `resourceAttributes`). */
export interface RequestAttributes {
  verb: string;
  /** Always `nodes`. */
  resource: "nodes";
  subresource: string;
  /** The node name. */
  name: string;
  /** The canonical request path (for logs and the 403 text). */
  path: string;
}

/** HTTP method → API verb (upstream's table, plus HEAD as GET; anything else has no verb). */
const METHOD_VERBS: Readonly<Record<string, string>> = {
  GET: "get",
  HEAD: "get",
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/** Path prefixes with their own subresource; everything else is `proxy`. */
const SUBRESOURCE_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ["/stats", "stats"],
  ["/metrics", "metrics"],
  ["/logs", "log"],
  ["/spec", "spec"],
  ["/checkpoint", "checkpoint"],
];

/** Endpoints that run code in or open streams to containers: always `create`. */
const STREAMING_PREFIXES = ["/exec", "/attach", "/run", "/portForward"];

const BAD_ESCAPE_REGEXP = /%(?![0-9a-fA-F]{2})/;
const FORBIDDEN_ESCAPE_REGEXP = /%(2f|5c|25|00)/i;

/** `path` equals `prefix` or lies below it (upstream's `isSubpath`). */
export function isSubpath(path: string, prefix: string): boolean {
  const base = prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
  return path === base || path.startsWith(`${base}/`);
}

/**
 * The decoded path of a raw request target (`/path?query` as it came off the wire, before any
 * URL parser resolved dot segments), or 400 for anything that a cleaner or a second decoder
 * would read differently (see the module comment). A trailing slash is kept: routes decide.
 * @throws {HttpError} 400.
 */
export function canonicalPath(target: string): string {
  const query = target.indexOf("?");
  const raw = query === -1 ? target : target.slice(0, query);
  if (!raw.startsWith("/")) throw badPath();
  if (BAD_ESCAPE_REGEXP.test(raw) || FORBIDDEN_ESCAPE_REGEXP.test(raw)) {
    throw badPath();
  }
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch (cause) {
    throw badPath(cause);
  }
  if (path.includes("\0") || path.includes("\\")) throw badPath();
  const segments = path.slice(1).split("/");
  for (const [i, segment] of segments.entries()) {
    if (segment === "." || segment === "..") throw badPath();
    // An empty segment is a `//`; only the last one (a trailing slash) is allowed.
    if (segment === "" && i !== segments.length - 1 && path !== "/") {
      throw badPath();
    }
  }
  return path;
}

function badPath(cause?: unknown): HttpError {
  return new HttpError(
    400,
    "Bad Request: the path is not canonical",
    cause === undefined ? {} : { cause },
  );
}

/**
 * The attributes of a request to the kubelet API on `nodeName`. An unknown method gets the
 * empty verb, which no authorizer allows.
 */
export function requestAttributes(
  request: { method: string; path: string },
  nodeName: string,
): RequestAttributes {
  const { method, path } = request;
  let verb = METHOD_VERBS[method.toUpperCase()] ?? "";
  let subresource = "proxy";
  for (const [prefix, name] of SUBRESOURCE_PREFIXES) {
    if (isSubpath(path, prefix)) {
      subresource = name;
      break;
    }
  }
  if (verb !== "" && STREAMING_PREFIXES.some((p) => isSubpath(path, p))) {
    verb = "create";
  }
  return { verb, resource: "nodes", subresource, name: nodeName, path };
}
