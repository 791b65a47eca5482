/**
 * The kubelet's healthz listener (`healthzBindAddress`:`healthzPort`, default
 * 127.0.0.1:10248): plain HTTP, no authentication, only the `/healthz` routes. As upstream,
 * a listener that cannot bind is logged once and the kubelet keeps running.
 *
 * @module
 */

import { createHandler, type ServerHost } from "./handler.ts";
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

const HEALTHZ_FIELDS = {
  address: "healthzBindAddress",
  addressFlag: "--healthz-bind-address",
  port: "healthzPort",
  portFlag: "--healthz-port",
};

/**
 * Serves `/healthz` until `options.signal` aborts and resolves once closed. Resolves at once
 * when `port` is 0; logs one error and resolves when the address cannot be bound.
 */
export async function runHealthzServer(
  host: ServerHost,
  options: HealthzServerOptions,
): Promise<void> {
  if (options.port === 0 || options.signal.aborted) return;
  const { logger } = host;
  try {
    await serve(createHandler(host), {
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
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    logger.error("Failed to start healthz server", { err: error.message });
  }
}
