/**
 * The only `Deno.serve` call of the kubelet: plain HTTP on one address until a signal aborts.
 * Bind failures become a {@linkcode ListenError} that names the configuration fields to change.
 *
 * @module
 */

import type { Logger } from "../log/mod.ts";
import { textResponse } from "./http_error.ts";

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

function listenError(cause: unknown, options: ServeOptions): ListenError {
  const { fields } = options;
  const address = joinHostPort(options.hostname, options.port);
  const where =
    `Cannot listen on "${address}" (${fields.address}:${fields.port})`;
  const change =
    `set ${fields.address} (${fields.addressFlag}) or ${fields.port} (${fields.portFlag})`;
  let detail: string;
  if (cause instanceof Deno.errors.AddrInUse) {
    detail =
      `the address is already in use; stop the process that holds it, ${change} to a free address, or set ${fields.port} to 0 to turn this listener off`;
  } else if (cause instanceof Deno.errors.AddrNotAvailable) {
    detail =
      `the address does not belong to this node; ${change} to an address of this node`;
  } else if (cause instanceof Deno.errors.NotCapable) {
    detail = `the process lacks --allow-net=${address}`;
  } else {
    detail = cause instanceof Error ? cause.message : String(cause);
  }
  return new ListenError(address, `${where}: ${detail}`, { cause });
}

/**
 * Serves `handler` on `hostname:port` until `options.signal` aborts, then resolves once the
 * listener has closed (in-flight requests finish first).
 * @throws {ListenError} when the address cannot be bound; nothing is left open then.
 */
export async function serve(
  handler: (request: Request) => Promise<Response>,
  options: ServeOptions,
): Promise<void> {
  if (options.signal.aborted) return;
  const { logger } = options;
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: options.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: options.port,
      signal: options.signal,
      onListen: (addr) => options.onListen?.(addr),
      onError: (error) => {
        logger.error("HTTP handler failed", {
          err: error instanceof Error ? error.message : String(error),
        });
        return textResponse(500, "Internal Server Error\n");
      },
    }, handler);
  } catch (cause) {
    throw listenError(cause, options);
  }
  await server.finished;
}
