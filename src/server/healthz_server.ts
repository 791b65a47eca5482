/**
 * The kubelet's healthz listener (`healthzBindAddress`:`healthzPort`, default
 * 127.0.0.1:10248): plain HTTP, no authentication, only the `/healthz` routes. As upstream,
 * a listener that cannot bind is logged and retried every 5 s while the kubelet keeps
 * running: a port still held by a kubelet that is shutting down frees up soon, and kubeadm
 * waits on this port.
 *
 * @module
 */

import { createHandler, type ServerHost } from "./handler.ts";
import type { HttpRequest } from "./http_request.ts";
import { joinHostPort, ListenError, serve } from "./serve.ts";

/** Options of {@linkcode runHealthzServer}. */
export interface HealthzServerOptions {
  /** `healthzBindAddress`. */
  hostname: string;
  /** `healthzPort`; 0 turns the listener off. */
  port: number;
  /** Closes the listener. */
  signal: AbortSignal;
  /** Called with the bound address once listening. */
  onListen?: (addr: Deno.NetAddr) => void;
}

/** Wait between bind attempts (upstream's `wait.Until` period for this listener). */
export const HEALTHZ_RETRY_MS = 5_000;

const HEALTHZ_FIELDS = {
  address: "healthzBindAddress",
  addressFlag: "--healthz-bind-address",
  port: "healthzPort",
  portFlag: "--healthz-port",
};

/**
 * Serves `/healthz` until `options.signal` aborts and resolves once closed. Resolves at once
 * when `port` is 0; while the address cannot be bound, logs one error per attempt and tries
 * again every {@linkcode HEALTHZ_RETRY_MS} (on the host's clock).
 */
export async function runHealthzServer(
  host: ServerHost,
  options: HealthzServerOptions,
): Promise<void> {
  if (options.port === 0) return;
  const handler = createHandler(host);
  while (!options.signal.aborted) {
    if (await serveOnce(host, handler, options)) return;
    try {
      await host.clock.sleep(HEALTHZ_RETRY_MS, options.signal);
    } catch {
      return; // aborted while waiting
    }
  }
}

/** One bind attempt: true once served and closed, false when the bind failed. */
async function serveOnce(
  host: ServerHost,
  handler: (request: HttpRequest) => Promise<Response>,
  options: HealthzServerOptions,
): Promise<boolean> {
  const { logger } = host;
  try {
    await serve(handler, {
      hostname: options.hostname,
      port: options.port,
      signal: options.signal,
      fields: HEALTHZ_FIELDS,
      logger,
      onListen: (addr) => {
        logger.info("Serving healthz", {
          address: `http://${joinHostPort(addr.hostname, addr.port)}/healthz`,
        });
        options.onListen?.(addr);
      },
    });
    return true;
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    logger.error("Failed to start healthz server", { err: error.message });
    return false;
  }
}
