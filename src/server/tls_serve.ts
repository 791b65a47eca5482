/**
 * The kubelet API's HTTPS listener. `Deno.serve` and `Deno.listenTls` (Deno 2.9.6) can neither
 * request a client certificate nor hand one over, so this listener is node:https with
 * `requestCert`: node:tls hands over the presented chain, and `auth/x509.ts` judges it
 * (OpenSSL's own verdict is not used: it is not checked against our clock and its reasons are
 * unreliable — a trusted certificate without `clientAuth` is reported as an unverifiable leaf).
 *
 * Limits against slow or huge clients (CVE-2020-8551): header bytes, time to finish the TLS
 * handshake, time to send the request headers and the whole request, idle keep-alive time and
 * open connections. Request bodies are not read (no route takes one yet).
 *
 * @module
 */

import { createServer, type Server } from "node:https";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "../log/mod.ts";
import type { ApiHandler } from "./api_handler.ts";
import {
  checkListenGrant,
  joinHostPort,
  type ListenerFields,
  ListenError,
} from "./serve.ts";
import { proxyUpgrade, upgradeTarget, writeRawResponse } from "./upgrade.ts";
import { textResponse } from "./http_error.ts";
import { listenUntilAborted, toRequest, writeResponse } from "./node_bridge.ts";
import { errorMessage } from "../util/error_message.ts";

/** Request limits of the HTTPS listener. */
export interface TlsLimits {
  /** Most header bytes per request (default 1 MiB, upstream's `MaxHeaderBytes`). */
  maxHeaderBytes?: number;
  /** Time to complete the TLS handshake (default 10 s). */
  handshakeTimeoutMs?: number;
  /** Time to receive the request headers (default 30 s). */
  headersTimeoutMs?: number;
  /** Time to receive the whole request (default 60 s; responses may stream longer). */
  requestTimeoutMs?: number;
  /** Idle keep-alive time (default 90 s, upstream's `IdleTimeout`). */
  idleTimeoutMs?: number;
  /** Most open connections (default 1024). */
  maxConnections?: number;
}

/** A certificate chain and its key, PEM. */
export interface TlsPair {
  certPem: string;
  keyPem: string;
}

/**
 * Where the listener's certificate comes from. It may change while serving (a rotated
 * serving certificate); until there is one, the listener accepts connections and every
 * handshake fails, as upstream's `GetCertificate` returning nothing does.
 */
export interface CertificateSource {
  /** The pair now; undefined → none yet. */
  current(): TlsPair | undefined;
  /** Calls `onChange` with each new pair; returns the function that stops it. */
  watch(onChange: (pair: TlsPair) => void): () => void;
}

/** A source that never changes. */
export function fixedCertificate(pair: TlsPair): CertificateSource {
  return { current: () => pair, watch: () => () => {} };
}

/** Options of {@linkcode serveTls}. */
export interface TlsServeOptions {
  hostname: string;
  /** 1–65535, or 0 for an ephemeral port (tests). */
  port: number;
  certificates: CertificateSource;
  /** Client CA bundle (PEM); set → clients are asked for a certificate. */
  clientCaPem?: string;
  /** `tlsMinVersion` as Go names it (`VersionTLS12`, default) or OpenSSL does (`TLSv1.2`). */
  minVersion?: string;
  limits?: TlsLimits;
  signal: AbortSignal;
  fields: ListenerFields;
  logger: Logger;
  onListen?: (addr: Deno.NetAddr) => void;
}

type MinVersion = "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";

const TLS_VERSIONS: Readonly<Record<string, MinVersion>> = {
  VersionTLS10: "TLSv1",
  VersionTLS11: "TLSv1.1",
  VersionTLS12: "TLSv1.2",
  VersionTLS13: "TLSv1.3",
  "TLSv1.2": "TLSv1.2",
  "TLSv1.3": "TLSv1.3",
};

/** `tlsMinVersion` → node:tls `minVersion`. @throws {RangeError} for an unknown name. */
export function tlsMinVersion(value: string | undefined): MinVersion {
  if (!value) return "TLSv1.2";
  const version = TLS_VERSIONS[value];
  if (!version) {
    throw new RangeError(
      `Invalid kubelet configuration field "tlsMinVersion": "${value}" is not one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13`,
    );
  }
  return version;
}

/**
 * Go's cipher suite names (`tls.CipherSuites()` and `tls.InsecureCipherSuites()`), the
 * values `tlsCipherSuites` accepts upstream.
 */
const GO_CIPHER_SUITES = new Set([
  "TLS_AES_128_GCM_SHA256",
  "TLS_AES_256_GCM_SHA384",
  "TLS_CHACHA20_POLY1305_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
  "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
  "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
  "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
  "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
  "TLS_RSA_WITH_AES_128_CBC_SHA",
  "TLS_RSA_WITH_AES_256_CBC_SHA",
  "TLS_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_RSA_WITH_AES_256_GCM_SHA384",
  "TLS_RSA_WITH_RC4_128_SHA",
  "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
  "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
]);

/**
 * Checks `tlsCipherSuites` names as upstream does at start. Deno's node:tls (rustls) ignores
 * the `ciphers` option and always offers only its AEAD suites (TLS 1.3 AES-GCM and
 * ChaCha20-Poly1305; TLS 1.2 ECDHE with AES-GCM or ChaCha20-Poly1305), so a valid list is
 * not applied; the caller says so.
 * @throws {RangeError} naming the first unknown suite.
 */
export function checkCipherSuites(names: readonly string[]): void {
  const unknown = names.find((name) => !GO_CIPHER_SUITES.has(name));
  if (unknown !== undefined) {
    throw new RangeError(
      `Invalid kubelet configuration field "tlsCipherSuites": unknown cipher suite "${unknown}"`,
    );
  }
}

/**
 * Chains already read, per connection: a client presents its certificate once, in the
 * handshake, and reading it back out of node:tls costs a third of a millisecond per request.
 */
const chains = new WeakMap<TLSSocket, Uint8Array[]>();

/** The presented chain, leaf first (node's `issuerCertificate` links; self-loops end it). */
export function peerChain(socket: TLSSocket): Uint8Array[] {
  const known = chains.get(socket);
  if (known) return known;
  const chain: Uint8Array[] = [];
  let cert = socket.getPeerCertificate(true) as {
    raw?: Uint8Array;
    issuerCertificate?: unknown;
  } | undefined;
  const seen = new Set<unknown>();
  while (cert?.raw && !seen.has(cert) && chain.length < 10) {
    seen.add(cert);
    chain.push(new Uint8Array(cert.raw));
    cert = cert.issuerCertificate as typeof cert;
  }
  chains.set(socket, chain);
  return chain;
}

/**
 * Serves `handler` over HTTPS on `hostname:port` until `options.signal` aborts, then resolves
 * once the listener has closed (open connections are closed too).
 * @throws {ListenError} when the address cannot be bound.
 */
export async function serveTls(
  handler: ApiHandler,
  options: TlsServeOptions,
): Promise<void> {
  if (options.signal.aborted) return;
  checkListenGrant(options);
  const { logger } = options;
  const limits = options.limits ?? {};
  const minVersion = tlsMinVersion(options.minVersion);
  // What a secure context is made of; set again whole when the certificate changes.
  const context = (pair: TlsPair | undefined) => ({
    ...(pair ? { cert: pair.certPem, key: pair.keyPem } : {}),
    minVersion,
    ...(options.clientCaPem ? { ca: options.clientCaPem } : {}),
  });
  const server: Server = createServer({
    ...context(options.certificates.current()),
    ...(options.clientCaPem
      ? { requestCert: true, rejectUnauthorized: false }
      : {}),
    handshakeTimeout: limits.handshakeTimeoutMs ?? 10_000,
    maxHeaderSize: limits.maxHeaderBytes ?? 1 << 20,
    headersTimeout: limits.headersTimeoutMs ?? 30_000,
    requestTimeout: limits.requestTimeoutMs ?? 60_000,
    keepAliveTimeout: limits.idleTimeoutMs ?? 90_000,
    connectionsCheckingInterval: 1_000,
  }, (req, res) => {
    handle(req)
      .then((response) =>
        writeResponse(
          upgradeTarget(response)
            ? textResponse(400, "Upgrade request required\n")
            : response,
          res,
        )
      )
      .catch((error) => {
        failed(error);
        res.destroy();
      });
  });
  const origin = `https://${joinHostPort(options.hostname, options.port)}`;
  const handle = (req: IncomingMessage) => {
    const socket = req.socket as TLSSocket;
    const info = {
      target: req.url ?? "/",
      peerCertificates: options.clientCaPem ? peerChain(socket) : [],
    };
    return handler(toRequest(req, origin), info);
  };
  const failed = (error: unknown) =>
    logger.error("HTTP handler failed", {
      err: errorMessage(error),
    });
  // Exec, attach and port-forward: the route answers with the runtime's streaming URL and
  // the socket is proxied there; any other answer is written raw and the socket closed.
  server.on(
    "upgrade",
    (req: IncomingMessage, socket: Duplex, head: Uint8Array) => {
      socket.on("error", () => socket.destroy());
      handle(req)
        .then((response) => {
          const target = upgradeTarget(response);
          if (!target) return writeRawResponse(socket, response);
          return proxyUpgrade(
            socket,
            head,
            {
              method: req.method ?? "GET",
              rawHeaders: req.rawHeaders,
              remoteAddress: req.socket.remoteAddress,
            },
            target,
            { logger },
          );
        })
        .catch((error) => {
          failed(error);
          socket.destroy();
        });
    },
  );
  server.maxConnections = limits.maxConnections ?? 1024;
  server.on("clientError", (_error: Error, socket: Socket) => {
    socket.destroy();
  });
  server.on("tlsClientError", (error: Error) => {
    logger.v(4).info("TLS handshake failed", { err: error.message });
  });
  const unwatch = options.certificates.watch((pair) => {
    server.setSecureContext(context(pair));
    logger.info("Serving a new certificate");
  });
  const address = joinHostPort(options.hostname, options.port);
  try {
    await listenUntilAborted(
      server,
      { ...options, closeAll: true },
      (cause) => listenError(cause as Error, address, options),
    );
  } finally {
    unwatch();
  }
}

function listenError(
  cause: Error,
  address: string,
  options: TlsServeOptions,
): ListenError {
  const { fields } = options;
  const code = (cause as { code?: string }).code;
  const where =
    `Cannot listen on "${address}" (${fields.address}:${fields.port})`;
  const detail = code === "EADDRINUSE"
    ? `the address is already in use; set ${fields.address} (${fields.addressFlag}) or ${fields.port} (${fields.portFlag}) to a free address`
    : code === "EADDRNOTAVAIL"
    ? `the address does not belong to this node; set ${fields.address} (${fields.addressFlag}) to an address of this node`
    : cause.message;
  return new ListenError(address, `${where}: ${detail}`, { cause });
}
