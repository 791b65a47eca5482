/**
 * The kubelet API's serving certificate from certificate signing requests
 * (`serverTLSBootstrap`; upstream `NewKubeletServerCertificateManager` in
 * pkg/kubelet/certificate/kubelet.go over client-go's certificate manager): signer
 * `kubernetes.io/kubelet-serving`, the node's addresses as subject alternative names, the
 * pairs under `--cert-dir` as `kubelet-server-*.pem`, rotated by the same engine as the
 * client certificate. Nothing approves these requests by default: until an approver does,
 * the listener is up and every handshake fails, as upstream's.
 *
 * @module
 */

import {
  CertificateRotator,
  certificateValidAt,
  type CsrApi,
  currentPairName,
  type NodeAddress,
  readFileIfExists,
  SERVING_PROFILE,
  type SubjectAltNames,
} from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { CertificateSource, TlsPair } from "../server/mod.ts";

/** Whether `text` is an IPv4 or IPv6 address. */
function isIp(text: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(text) || text.includes(":");
}

/**
 * The names a serving request asks for, from the Node's status addresses (upstream
 * `addressesToHostnamesAndIPs` and its template function): Hostname and the DNS types as DNS
 * names (a Hostname that is an IP as an IP), InternalIP and ExternalIP as IPs, each once,
 * sorted. Undefined without an IP: upstream requests nothing until the node has one (its
 * `AllowDNSOnlyNodeCSR` gate, off by default, would allow DNS names alone).
 */
export function servingAltNames(
  addresses: readonly NodeAddress[],
): SubjectAltNames | undefined {
  const dns = new Set<string>();
  const ips = new Set<string>();
  for (const { type, address } of addresses) {
    if (!address) continue;
    if (type === "Hostname") (isIp(address) ? ips : dns).add(address);
    else if (type === "InternalIP" || type === "ExternalIP") {
      if (isIp(address)) ips.add(address);
    } else if (type === "InternalDNS" || type === "ExternalDNS") {
      dns.add(address);
    }
  }
  if (ips.size === 0) return undefined;
  return { dnsNames: [...dns].sort(), ips: [...ips].sort() };
}

/** Certificates then the private key of a stored pair, apart (node:tls takes them so). */
export function splitPair(pairPem: string): TlsPair | undefined {
  const certs = pairPem.match(
    /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
  );
  const key =
    /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]+?-----END \1PRIVATE KEY-----/
      .exec(pairPem);
  if (!certs || !key) return undefined;
  return { certPem: certs.join("\n") + "\n", keyPem: key[0] + "\n" };
}

/** Dependencies of {@linkcode startServingCertificates}. */
export interface ServingCertDeps {
  clock: Clock;
  logger: Logger;
  /** Certificate signing requests with the node's identity; omitted → standalone, no requests. */
  csr?: CsrApi | undefined;
  /** The Node's status addresses as last reported; undefined → not known yet. */
  addresses(): readonly NodeAddress[] | undefined;
}

/** Options of {@linkcode startServingCertificates}. */
export interface ServingCertOptions {
  nodeName: string;
  certDir: string;
  /** Used until the first issued pair, as upstream's store falls back to them. */
  tlsCertFile?: string | undefined;
  tlsPrivateKeyFile?: string | undefined;
  /** How often a request is polled (default 1 s). */
  pollIntervalMs?: number;
  signal: AbortSignal;
  /** Jitter of the rotation deadline (default Math.random). */
  random?: () => number;
}

/**
 * Loads the current serving pair (`kubelet-server-current.pem`, else the configured files)
 * and keeps it issued and rotated until the signal aborts. `done` settles once rotation has
 * stopped.
 */
export async function startServingCertificates(
  deps: ServingCertDeps,
  options: ServingCertOptions,
): Promise<CertificateSource & { done: Promise<void> }> {
  const { clock, logger } = deps;
  const now = clock.now();
  let pairPem = await readFileIfExists(
    `${options.certDir}/${currentPairName(SERVING_PROFILE)}`,
  );
  if (!pairPem || !certificateValidAt(pairPem, now)) {
    pairPem = undefined;
    if (options.tlsCertFile && options.tlsPrivateKeyFile) {
      const cert = await readFileIfExists(options.tlsCertFile);
      const key = await readFileIfExists(options.tlsPrivateKeyFile);
      if (cert && key) pairPem = `${cert.trimEnd()}\n${key}`;
    }
  }
  let current = pairPem ? splitPair(pairPem) : undefined;
  const watchers = new Set<(pair: TlsPair) => void>();
  const source: CertificateSource = {
    current: () => current,
    watch(onChange) {
      watchers.add(onChange);
      return () => watchers.delete(onChange);
    },
  };
  if (!deps.csr) {
    logger.warn(
      "serverTLSBootstrap is set but there is no API server to request a serving certificate from",
      { certDir: options.certDir },
    );
    return { ...source, done: Promise.resolve() };
  }
  await Deno.mkdir(options.certDir, { recursive: true, mode: 0o755 });
  const rotator = new CertificateRotator({
    clock,
    logger,
    api: deps.csr,
    ...(options.random ? { random: options.random } : {}),
    onRotated(pair) {
      const next = splitPair(pair);
      if (!next) throw new Error("the issued serving pair does not parse");
      current = next;
      for (const watcher of watchers) watcher(next);
    },
  }, {
    nodeName: options.nodeName,
    certDir: options.certDir,
    profile: SERVING_PROFILE,
    sans: () => servingAltNames(deps.addresses() ?? []),
    currentPairPem: pairPem ?? "",
    ...(options.pollIntervalMs !== undefined
      ? { pollIntervalMs: options.pollIntervalMs }
      : {}),
  });
  return { ...source, done: rotator.run(options.signal) };
}
