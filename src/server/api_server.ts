/**
 * The kubelet API listeners: HTTPS on `address:port` with authentication and authorization
 * (upstream's `ListenAndServeKubeletServer`), and, only when `readOnlyPort` is non-zero, plain
 * HTTP on `address:readOnlyPort` with the read-only routes and no authentication
 * (`ListenAndServeKubeletReadOnlyServer`). Builds the authenticator and authorizer from the
 * configuration (`BuildAuth` in cmd/kubelet/app/auth.go); a listener that cannot bind is
 * logged and retried every 5 s, like the healthz listener.
 *
 * @module
 */

import type { Logger } from "../log/mod.ts";
import type { HttpRequest } from "./http_request.ts";
import type { ReviewClient } from "./auth/review_client.ts";
import {
  createReloadingReviewClient,
  loadReviewConnection,
} from "./auth/review_client.ts";
import {
  type Authenticator,
  createAuthenticator,
} from "./auth/authenticate.ts";
import {
  alwaysAllow,
  type Authorizer,
  createWebhookAuthorizer,
} from "./auth/authorize.ts";
import { createWebhookTokenAuthenticator } from "./auth/token_webhook.ts";
import {
  type ClientCaSource,
  followClientCaFile,
} from "./auth/client_ca_file.ts";
import {
  type ApiHandler,
  type ApiServerHost,
  createApiHandler,
} from "./api_handler.ts";
import { joinHostPort, ListenError, serve } from "./serve.ts";
import { loadServingPair } from "./tls/serving_cert.ts";
import {
  type CertificateSource,
  checkCipherSuites,
  fixedCertificate,
  serveTls,
  type TlsLimits,
  tlsMinVersion,
} from "./tls_serve.ts";

/** The configuration the kubelet API reads (durations already in ms). */
export interface ApiServerConfig {
  address: string;
  port: number;
  /** 0 or omitted → no read-only listener. */
  readOnlyPort?: number;
  tlsCertFile?: string | undefined;
  tlsPrivateKeyFile?: string | undefined;
  tlsMinVersion?: string | undefined;
  tlsCipherSuites?: readonly string[] | undefined;
  /** `--cert-dir`. */
  certDir?: string | undefined;
  clientCAFile?: string | undefined;
  anonymousAuth: boolean;
  webhookAuthn: { enabled: boolean; cacheTtlMs: number };
  /** `AlwaysAllow` or `Webhook`. */
  authorizationMode: string;
  webhookAuthz: { allowedTtlMs: number; deniedTtlMs: number };
  enableDebuggingHandlers?: boolean;
  /** `/logs/` (default true; only with the debugging handlers). */
  enableSystemLogHandler?: boolean;
  /** `--kubeconfig`: the credentials of the TokenReview/SubjectAccessReview calls. */
  kubeconfig?: string | undefined;
}

/** Options of {@linkcode runApiServer}. */
export interface ApiServerOptions {
  /** What to serve and how to authenticate and authorize. */
  config: ApiServerConfig;
  signal: AbortSignal;
  /** Host name for a self-signed certificate. */
  hostname: string;
  limits?: TlsLimits;
  /** Tests: the review calls, instead of a client built from the kubeconfig. */
  reviewClient?: ReviewClient;
  /**
   * The serving certificate from certificate signing requests (`serverTLSBootstrap`);
   * omitted → the configured or self-signed pair.
   */
  servingCertificates?: CertificateSource;
  onListen?: (addr: Deno.NetAddr) => void;
  onReadOnlyListen?: (addr: Deno.NetAddr) => void;
}

/** Wait between bind attempts. */
export const API_RETRY_MS = 5_000;

const API_FIELDS = {
  address: "address",
  addressFlag: "--address",
  port: "port",
  portFlag: "--port",
};
const READ_ONLY_FIELDS = {
  ...API_FIELDS,
  port: "readOnlyPort",
  portFlag: "--read-only-port",
};

/** The authentication and authorization a configuration asks for. */
export async function buildApiAuth(
  deps: { host: ApiServerHost; reviewClient?: ReviewClient | undefined },
  config: ApiServerConfig,
): Promise<
  { authenticate: Authenticator; authorizer: Authorizer; close(): void }
> {
  const { clock } = deps.host;
  const webhook = config.webhookAuthn.enabled ||
    config.authorizationMode === "Webhook";
  let client = deps.reviewClient;
  let owned = false;
  if (webhook && !client) {
    if (!config.kubeconfig) {
      throw new TypeError(
        "The kubelet API needs a kubeconfig (--kubeconfig) for authentication.webhook.enabled or authorization.mode Webhook",
      );
    }
    const kubeconfig = config.kubeconfig;
    client = createReloadingReviewClient(
      await loadReviewConnection(kubeconfig),
      { clock, load: () => loadReviewConnection(kubeconfig) },
    );
    owned = true;
  }
  let clientCAs: ClientCaSource | undefined;
  try {
    clientCAs = config.clientCAFile
      ? await followClientCaFile(
        { clock, logger: deps.host.logger },
        config.clientCAFile,
      )
      : undefined;
  } catch (error) {
    if (owned) client?.close();
    throw error;
  }
  const authenticate = createAuthenticator({
    clock,
    logger: deps.host.logger,
    ...(config.webhookAuthn.enabled && client
      ? {
        tokens: createWebhookTokenAuthenticator({ reviewer: client, clock }, {
          ttlMs: config.webhookAuthn.cacheTtlMs,
        }),
      }
      : {}),
  }, {
    ...(clientCAs ? { clientCAs: clientCAs.current } : {}),
    anonymous: config.anonymousAuth,
  });
  let authorizer: Authorizer;
  if (config.authorizationMode === "AlwaysAllow") {
    authorizer = alwaysAllow;
  } else if (config.authorizationMode === "Webhook" && client) {
    authorizer = createWebhookAuthorizer({ reviewer: client, clock }, {
      allowedTtlMs: config.webhookAuthz.allowedTtlMs,
      deniedTtlMs: config.webhookAuthz.deniedTtlMs,
    });
  } else {
    clientCAs?.close();
    throw new RangeError(
      `Invalid kubelet configuration field "authorization.mode": "${config.authorizationMode}" is not AlwaysAllow or Webhook`,
    );
  }
  return {
    authenticate,
    authorizer,
    close: () => {
      clientCAs?.close();
      if (owned) client?.close();
    },
  };
}

async function retrying(
  host: ApiServerHost,
  signal: AbortSignal,
  what: string,
  attempt: () => Promise<void>,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (!(error instanceof ListenError)) throw error;
      host.logger.error(`Failed to start ${what}`, { err: error.message });
    }
    try {
      await host.clock.sleep(API_RETRY_MS, signal);
    } catch {
      return;
    }
  }
}

/**
 * Serves the kubelet API (and the read-only port when configured) until `options.signal`
 * aborts; resolves once closed.
 * @throws {TypeError|RangeError|Deno.errors.NotFound} when the configuration cannot be served
 * (no kubeconfig for a webhook, unreadable certificate or CA files, unknown mode or TLS version)
 * or must not be: anonymous requests with `AlwaysAllow` are refused outright (upstream serves
 * them; they are how kubelets get taken over).
 */
export async function runApiServer(
  host: ApiServerHost,
  options: ApiServerOptions,
): Promise<void> {
  const { signal, config } = options;
  if (signal.aborted) return;
  const tasks: Promise<void>[] = [];
  if (config.port > 0) tasks.push((await startHttps(host, options)).done);
  if ((config.readOnlyPort ?? 0) > 0) tasks.push(serveReadOnly(host, options));
  await Promise.all(tasks);
}

/** Refuses settings that must not or cannot be served, before anything is written. */
function checkSettings(config: ApiServerConfig, logger: Logger): void {
  if (config.anonymousAuth && config.authorizationMode === "AlwaysAllow") {
    throw new TypeError(
      `Refusing to serve the kubelet API on "${
        joinHostPort(config.address, config.port)
      }" with authentication.anonymous.enabled and authorization.mode AlwaysAllow: anyone who reaches it could run commands in every container; set authentication.anonymous.enabled to false (--anonymous-auth=false) or authorization.mode to Webhook (--authorization-mode=Webhook)`,
    );
  }
  tlsMinVersion(config.tlsMinVersion);
  if (config.tlsCipherSuites?.length) {
    checkCipherSuites(config.tlsCipherSuites);
    logger.warn(
      "tlsCipherSuites is not applied: Deno's TLS offers only its AEAD suites (TLS 1.3, and TLS 1.2 ECDHE with AES-GCM or ChaCha20-Poly1305)",
      { tlsCipherSuites: config.tlsCipherSuites.join(",") },
    );
  }
}

/**
 * Sets up the HTTPS listener (settings, then authentication, then the serving pair, so a
 * configuration that cannot authenticate writes no certificate); `done` settles once closed.
 */
async function startHttps(
  host: ApiServerHost,
  options: ApiServerOptions,
): Promise<{ done: Promise<void> }> {
  const { logger, clock } = host;
  const { signal, config } = options;
  checkSettings(config, logger);
  const auth = await buildApiAuth({
    host,
    reviewClient: options.reviewClient,
  }, config);
  let certificates = options.servingCertificates;
  let certFile = "certificate signing requests";
  let clientCaPem;
  try {
    if (!certificates) {
      const pair = await loadServingPair({
        tlsCertFile: config.tlsCertFile,
        tlsPrivateKeyFile: config.tlsPrivateKeyFile,
        certDir: config.certDir,
        hostname: options.hostname,
        nowMs: clock.now(),
      });
      certificates = fixedCertificate(pair);
      certFile = pair.certFile;
    }
    clientCaPem = config.clientCAFile
      ? await Deno.readTextFile(config.clientCAFile)
      : undefined;
  } catch (error) {
    auth.close();
    throw error;
  }
  const handler = createApiHandler(host, {
    auth,
    enableDebuggingHandlers: config.enableDebuggingHandlers ?? true,
    enableSystemLogHandler: config.enableSystemLogHandler ?? true,
  });
  const source = certificates;
  const done = retrying(
    host,
    signal,
    "the kubelet API server",
    () =>
      serveTls(handler, {
        hostname: config.address,
        port: config.port,
        certificates: source,
        ...(clientCaPem ? { clientCaPem } : {}),
        ...(config.tlsMinVersion ? { minVersion: config.tlsMinVersion } : {}),
        ...(options.limits ? { limits: options.limits } : {}),
        signal,
        fields: API_FIELDS,
        logger,
        onListen: (addr) => {
          logger.info("Serving the kubelet API", {
            address: `https://${joinHostPort(addr.hostname, addr.port)}`,
            certFile,
          });
          options.onListen?.(addr);
        },
      }),
  ).finally(() => auth.close());
  return { done };
}

/** The read-only port: plain HTTP, no authentication, read-only routes. */
function serveReadOnly(
  host: ApiServerHost,
  options: ApiServerOptions,
): Promise<void> {
  const { logger } = host;
  const { config, signal } = options;
  const handler = readOnlyHandler(createApiHandler(host));
  return retrying(
    host,
    signal,
    "the read-only kubelet API",
    () =>
      serve(handler, {
        hostname: config.address,
        port: config.readOnlyPort ?? 0,
        signal,
        fields: READ_ONLY_FIELDS,
        logger,
        onListen: (addr) => {
          logger.info("Serving the read-only kubelet API", {
            address: `http://${joinHostPort(addr.hostname, addr.port)}`,
          });
          options.onReadOnlyListen?.(addr);
        },
      }),
  );
}

/** Adapts the API handler to `serve`: the URL's path is all the read-only port can see. */
function readOnlyHandler(
  handler: ApiHandler,
): (request: HttpRequest) => Promise<Response> {
  return (request) => {
    const url = new URL(request.url);
    return handler(request, {
      target: `${url.pathname}${url.search}`,
      peerCertificates: [],
    });
  };
}
