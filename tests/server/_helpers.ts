/** Shared pieces of the kubelet API tests: a host, a running server, HTTPS clients. */
import { systemClock } from "../../src/clock/mod.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import {
  type ApiServerConfig,
  type ApiServerHost,
  type ApiServerOptions,
  type ReviewClient,
  runApiServer,
} from "../../src/server/mod.ts";

export function testHost(logger = new CaptureLogger()): ApiServerHost {
  return {
    clock: systemClock,
    logger,
    syncLoop: { latestLoopEntryTime: () => undefined },
    resyncIntervalMs: 60_000,
    nodeName: "node-a",
    pods: () => [{ metadata: { name: "web", namespace: "default" } }],
    runningPods: () => Promise.resolve([]),
    config: () => ({ port: 10250 }),
  };
}

/** A reviewer that authenticates no token and allows every request (tests of the transport). */
export const ALLOW_ALL: ReviewClient = {
  reviewToken: () => Promise.resolve({ authenticated: false }),
  reviewAccess: () => Promise.resolve({ allowed: true }),
  close() {},
};

/** Anonymous requests allowed by {@linkcode ALLOW_ALL} through Webhook authorization. */
export const OPEN_CONFIG: Partial<ApiServerConfig> = {
  anonymousAuth: true,
  authorizationMode: "Webhook",
};

export const BASE_CONFIG: ApiServerConfig = {
  address: "127.0.0.1",
  port: 0,
  anonymousAuth: false,
  webhookAuthn: { enabled: false, cacheTtlMs: 120_000 },
  authorizationMode: "AlwaysAllow",
  webhookAuthz: { allowedTtlMs: 300_000, deniedTtlMs: 30_000 },
};

/** A running kubelet API on 127.0.0.1 and a free port; dispose to stop it. */
export interface RunningApi extends AsyncDisposable {
  port: number;
  url: string;
  logger: CaptureLogger;
}

/** A port that was free a moment ago (the kubelet API treats port 0 as off). */
export function freePort(): number {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return (listener.addr as Deno.NetAddr).port;
}

/**
 * A free port whose next port is free too, for a daemon that takes both (etcd's client and
 * peer ports in scripts/cluster_env.sh).
 */
export function freePortPair(): number {
  for (;;) {
    using first = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (first.addr as Deno.NetAddr).port;
    if (port >= 65535) continue;
    try {
      using _second = Deno.listen({ hostname: "127.0.0.1", port: port + 1 });
      return port;
    } catch {
      // the next one is taken: try another
    }
  }
}

export async function startApi(
  config: Partial<ApiServerConfig>,
  options: Partial<Omit<ApiServerOptions, "config">> = {},
): Promise<RunningApi> {
  const logger = new CaptureLogger();
  const ac = new AbortController();
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const done = runApiServer(testHost(logger), {
    hostname: "node-a",
    ...options,
    config: { ...BASE_CONFIG, port: freePort(), ...config },
    signal: ac.signal,
    onListen: resolve,
  });
  const addr = await Promise.race([
    promise,
    done.then(() => {
      throw new Error("the kubelet API stopped before listening");
    }),
  ]);
  return {
    port: addr.port,
    url: `https://127.0.0.1:${addr.port}`,
    logger,
    async [Symbol.asyncDispose]() {
      ac.abort();
      await done;
    },
  };
}

/** GET over HTTPS with an optional client pair; status and body. */
export async function get(
  url: string,
  options: {
    caPem: string;
    cert?: { certPem: string; keyPem: string };
    token?: string;
    method?: string;
  },
): Promise<{ status: number; body: string }> {
  using client = Deno.createHttpClient({
    caCerts: [options.caPem],
    ...(options.cert
      ? { cert: options.cert.certPem, key: options.cert.keyPem }
      : {}),
  });
  const response = await fetch(url, {
    client,
    method: options.method ?? "GET",
    ...(options.token
      ? { headers: { authorization: `Bearer ${options.token}` } }
      : {}),
  });
  return { status: response.status, body: await response.text() };
}
