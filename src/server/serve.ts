/**
 * The kubelet's plain HTTP listener (healthz, the read-only port) on one address until a
 * signal aborts. Bind failures become a {@linkcode ListenError} that names the configuration
 * fields to change.
 *
 * It is node:http, not `Deno.serve`: `Deno.serve` (2.9.6) has no header size or time limit,
 * and clients trickling header bytes were measured to hold their connections (and the
 * kubelet's descriptors) for as long as they liked. Here the HTTPS listener's limits apply.
 *
 * @module
 */

import { createServer, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../log/mod.ts";
import { textResponse } from "./http_error.ts";
import type { HttpRequest } from "./http_request.ts";
import { listenUntilAborted, toRequest, writeResponse } from "./node_bridge.ts";
import { errorMessage } from "../util/error_message.ts";

/** The configuration fields (and their flags) that set a listener's address and port. */
export interface ListenerFields {
  /** e.g. `healthzBindAddress`. */
  address: string;
  /** e.g. `--healthz-bind-address`. */
  addressFlag: string;
  /** e.g. `healthzPort`. */
  port: string;
  /** e.g. `--healthz-port`. */
  portFlag: string;
}

/** Options of {@linkcode serve}. */
export interface ServeOptions {
  hostname: string;
  /** 1–65535, or 0 for an ephemeral port (tests). */
  port: number;
  /** Closes the listener; {@linkcode serve} resolves once it has closed. */
  signal: AbortSignal;
  /** Named in bind errors. */
  fields: ListenerFields;
  logger: Logger;
  /** Called with the bound address (the real port when `port` is 0). */
  onListen?: (addr: Deno.NetAddr) => void;
  /** Header size and time limits (defaults as the HTTPS listener's). */
  limits?: PlainLimits;
}

/** Request limits of the plain listener. */
export interface PlainLimits {
  /** Most header bytes per request (default 1 MiB). */
  maxHeaderBytes?: number;
  /** Time to receive the request headers (default 30 s). */
  headersTimeoutMs?: number;
  /** Time to receive the whole request (default 60 s). */
  requestTimeoutMs?: number;
  /** Idle keep-alive time (default 90 s). */
  idleTimeoutMs?: number;
  /** Most open connections (default 1024). */
  maxConnections?: number;
}

/** The listener could not bind; `cause` is Deno's error (`AddrInUse`, `AddrNotAvailable`, …). */
export class ListenError extends Error {
  readonly address: string;

  constructor(address: string, message: string, options: ErrorOptions) {
    super(message, options);
    this.name = "ListenError";
    this.address = address;
  }
}

/** `host:port`, with brackets around an IPv6 host. */
export function joinHostPort(hostname: string, port: number): string {
  const bare = hostname.replace(/^\[(.*)\]$/, "$1");
  return bare.includes(":") ? `[${bare}]:${port}` : `${bare}:${port}`;
}

function listenError(
  cause: unknown,
  options: Pick<ServeOptions, "hostname" | "port" | "fields">,
): ListenError {
  const { fields } = options;
  const address = joinHostPort(options.hostname, options.port);
  const where =
    `Cannot listen on "${address}" (${fields.address}:${fields.port})`;
  const change =
    `set ${fields.address} (${fields.addressFlag}) or ${fields.port} (${fields.portFlag})`;
  const code = (cause as { code?: string } | undefined)?.code;
  let detail: string;
  if (cause instanceof Deno.errors.AddrInUse || code === "EADDRINUSE") {
    detail =
      `the address is already in use; stop the process that holds it, ${change} to a free address, or set ${fields.port} to 0 to turn this listener off`;
  } else if (
    cause instanceof Deno.errors.AddrNotAvailable || code === "EADDRNOTAVAIL"
  ) {
    detail =
      `the address does not belong to this node; ${change} to an address of this node`;
  } else if (cause instanceof Deno.errors.NotCapable) {
    detail = `the process lacks --allow-net=${address}`;
  } else {
    detail = errorMessage(cause);
  }
  return new ListenError(address, `${where}: ${detail}`, { cause });
}

/**
 * Throws the {@linkcode ListenError} of a missing `--allow-net` grant for the address: node:net
 * would throw `NotCapable` later, from inside its listen tick, where no caller can catch it.
 */
export function checkListenGrant(
  options: Pick<ServeOptions, "hostname" | "port" | "fields">,
): void {
  const bare = options.hostname.replace(/^\[(.*)\]$/, "$1");
  const host = options.port === 0
    ? bare
    : joinHostPort(options.hostname, options.port);
  if (Deno.permissions.querySync({ name: "net", host }).state === "granted") {
    return;
  }
  throw listenError(
    new Deno.errors.NotCapable(`Requires net access to "${host}"`),
    options,
  );
}

/**
 * Serves `handler` on `hostname:port` until `options.signal` aborts, then resolves once the
 * listener has closed (idle connections are closed, in-flight requests finish first).
 * @throws {ListenError} when the address cannot be bound; nothing is left open then.
 */
export async function serve(
  handler: (request: HttpRequest) => Promise<Response>,
  options: ServeOptions,
): Promise<void> {
  if (options.signal.aborted) return;
  checkListenGrant(options);
  const { logger } = options;
  const limits = options.limits ?? {};
  const origin = `http://${joinHostPort(options.hostname, options.port)}`;
  const failed = (error: unknown) => {
    logger.error("HTTP handler failed", {
      err: errorMessage(error),
    });
    return textResponse(500, "Internal Server Error\n");
  };
  const server = createServer({
    maxHeaderSize: limits.maxHeaderBytes ?? 1 << 20,
    headersTimeout: limits.headersTimeoutMs ?? 30_000,
    requestTimeout: limits.requestTimeoutMs ?? 60_000,
    keepAliveTimeout: limits.idleTimeoutMs ?? 90_000,
    // The default 30 s check lets a slow client live far past a short limit.
    connectionsCheckingInterval: 1_000,
  }, (req: IncomingMessage, res) => {
    handler(toRequest(req, origin))
      .catch(failed)
      .then((response) => writeResponse(response, res))
      .catch(() => res.destroy());
  });
  server.maxConnections = limits.maxConnections ?? 1024;
  server.on("clientError", (_error: Error, socket: Socket) => {
    socket.destroy();
  });
  await listenUntilAborted(
    server,
    { ...options, closeAll: false },
    (cause) => listenError(cause, options),
  );
}
