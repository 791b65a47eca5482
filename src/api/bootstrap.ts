/**
 * TLS bootstrap of the kubelet's client identity (upstream
 * `pkg/kubelet/certificate/bootstrap.LoadClientCert` with client-go's
 * `util/certificate/csr`): when `--kubeconfig` has no usable client certificate, make a key,
 * ask for a certificate with a CertificateSigningRequest sent with the bootstrap
 * credentials, wait until it is approved and issued, store the pair under `--cert-dir`
 * (`kubelet-client-<time>.pem` behind the `kubelet-client-current.pem` link, see
 * cert_pair_store.ts) and write the
 * kubeconfig, each atomically.
 * @module
 */
import { X509Certificate } from "node:crypto";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import {
  csrObjectName,
  generateNodeKey,
  importNodeKey,
  KUBELET_CLIENT_SIGNER,
  KUBELET_CLIENT_USAGES,
  KUBELET_SERVING_SIGNER,
  KUBELET_SERVING_USAGES,
  makeNodeCsr,
  type SubjectAltNames,
} from "./csr.ts";
import { storePair, writeFileAtomic } from "./cert_pair_store.ts";
import { ApiAlreadyExistsError } from "./errors.ts";
import {
  type Connection,
  loadKubeconfig,
  renderCertKubeconfig,
} from "./kubeconfig.ts";
import type { CertificateSigningRequest, CsrApi } from "./types.ts";
import { errorMessage } from "../util/error_message.ts";

/**
 * What one kind of node certificate is: the signer and usages of its request and the file
 * name prefix of its pairs under `--cert-dir` (upstream's certificate store `pairNamePrefix`).
 */
export interface CertificateProfile {
  /** For logs: "client" or "serving". */
  kind: string;
  signerName: string;
  usages: readonly string[];
  /** `<prefix>-current.pem`, `<prefix>-<time>.pem` and `<prefix>.key.tmp`. */
  pairPrefix: string;
}

/** The kubelet's client certificate (TLS bootstrap and client rotation). */
export const CLIENT_PROFILE: CertificateProfile = {
  kind: "client",
  signerName: KUBELET_CLIENT_SIGNER,
  usages: KUBELET_CLIENT_USAGES,
  pairPrefix: "kubelet-client",
};

/** The kubelet API's serving certificate (`serverTLSBootstrap`). */
export const SERVING_PROFILE: CertificateProfile = {
  kind: "serving",
  signerName: KUBELET_SERVING_SIGNER,
  usages: KUBELET_SERVING_USAGES,
  pairPrefix: "kubelet-server",
};

/** The current pair's file name of a profile. */
export function currentPairName(profile: CertificateProfile): string {
  return `${profile.pairPrefix}-current.pem`;
}

/** File names under `--cert-dir`, as upstream's certificate store uses them. */
export const CLIENT_PAIR_CURRENT = currentPairName(CLIENT_PROFILE);

/** Dependencies of {@linkcode bootstrapClientCertificate}. */
export interface BootstrapDeps {
  clock: Clock;
  logger: Logger;
  /** Builds the CSR client from the bootstrap connection. */
  csrApiFor(connection: Connection): CsrApi & { close?(): void };
}

/** Options of {@linkcode bootstrapClientCertificate}. */
export interface BootstrapOptions {
  nodeName: string;
  kubeconfigPath: string;
  bootstrapKubeconfigPath: string;
  certDir: string;
  /** How often the request is polled (default 1 s). */
  pollIntervalMs?: number;
  /** Give up after this long (default 1 h). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The first certificate of a PEM bundle, or undefined when it does not parse. */
function firstCertificate(pem: string): X509Certificate | undefined {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(
    pem,
  );
  if (!m) return undefined;
  try {
    return new X509Certificate(m[0]);
  } catch {
    return undefined;
  }
}

/** True when the PEM holds a certificate valid at `nowMs` (upstream `isClientConfigStillValid`). */
export function certificateValidAt(pem: string, nowMs: number): boolean {
  const cert = firstCertificate(pem);
  if (!cert) return false;
  return Date.parse(cert.validFrom) <= nowMs &&
    nowMs < Date.parse(cert.validTo);
}

/** The file's text, or undefined when it does not exist. */
export async function readFileIfExists(
  path: string,
): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/** Whether the kubeconfig at `path` has credentials that still work without bootstrap. */
async function kubeconfigUsable(path: string, nowMs: number): Promise<boolean> {
  let conn: Connection;
  try {
    conn = await loadKubeconfig(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
  if (conn.certPem) return certificateValidAt(conn.certPem, nowMs);
  return conn.token !== undefined;
}

function conditionOf(csr: CertificateSigningRequest, type: string): boolean {
  return csr.status?.conditions?.some((c) =>
    c.type === type && c.status !== "False"
  ) ?? false;
}

/**
 * The issued certificate of `csr` (PEM), or undefined while it waits.
 * @throws {Error} when the request is gone, denied or failed.
 */
function issuedCertificate(
  csr: CertificateSigningRequest | undefined,
  name: string,
): string | undefined {
  if (!csr) {
    throw new Error(`Certificate signing request "${name}" was deleted`);
  }
  if (conditionOf(csr, "Denied") || conditionOf(csr, "Failed")) {
    throw new Error(
      `Certificate signing request "${name}" was denied or failed`,
    );
  }
  if (conditionOf(csr, "Approved") && csr.status?.certificate) {
    return new TextDecoder().decode(
      Uint8Array.from(atob(csr.status.certificate), (c) => c.charCodeAt(0)),
    );
  }
  return undefined;
}

/** The longest single watch of a request before it is read again. */
const WATCH_SECONDS = 300;

/**
 * Waits for the request to be issued as client-go's `WaitForCertificate` does: read it, then
 * watch it from that version, so an issuance is seen at once. Where the watch fails or ends
 * early, the request is read again after at most `pollIntervalMs`.
 */
async function waitForCertificate(
  api: CsrApi,
  name: string,
  deps: { clock: Clock; logger: Logger },
  options: RequestCertificateOptions,
): Promise<string> {
  const { clock } = deps;
  const deadline = clock.now() + (options.timeoutMs ?? 3_600_000);
  const call = options.signal ? { signal: options.signal } : {};
  const pollMs = options.pollIntervalMs ?? 1000;
  for (;;) {
    const csr = await api.getCsr(name, call);
    const issued = issuedCertificate(csr, name);
    if (issued !== undefined) return issued;
    const left = deadline - clock.now();
    if (left <= 0) {
      throw new Error(
        `Timed out waiting for certificate signing request "${name}" to be issued`,
      );
    }
    const began = clock.now();
    if (api.watchCsr) {
      const watched = await watchForCertificate(
        api.watchCsr.bind(api),
        name,
        csr?.metadata.resourceVersion ?? "",
        Math.min(WATCH_SECONDS, Math.ceil(left / 1000)),
        deps.logger,
        call,
      );
      if (watched !== undefined) return watched;
    }
    // a watch refused or closed at once must not turn this into a busy loop
    const waited = clock.now() - began;
    if (waited < pollMs) await clock.sleep(pollMs - waited, options.signal);
  }
}

/**
 * The certificate once a watch of the request shows it issued; undefined when the watch ends
 * or fails first (the caller reads the request again).
 * @throws {Error} when the request is deleted, denied or failed, or the signal aborts.
 */
async function watchForCertificate(
  watch: NonNullable<CsrApi["watchCsr"]>,
  name: string,
  resourceVersion: string,
  timeoutSeconds: number,
  logger: Logger,
  call: { signal?: AbortSignal },
): Promise<string | undefined> {
  const events = watch(name, resourceVersion, { ...call, timeoutSeconds })
    [Symbol.asyncIterator]();
  try {
    for (;;) {
      let next;
      try {
        next = await events.next();
      } catch (cause) {
        if (call.signal?.aborted) throw cause;
        logger.v(2).info("Watching the certificate signing request failed", {
          csr: name,
          err: errorMessage(cause),
        });
        return undefined;
      }
      if (next.done) return undefined;
      const event = next.value;
      if (event.type === "BOOKMARK") continue;
      const issued = issuedCertificate(
        event.type === "DELETED" ? undefined : event.object,
        name,
      );
      if (issued !== undefined) return issued;
    }
  } finally {
    await events.return?.().catch(() => {});
  }
}

/** Options of {@linkcode requestNodeCertificate}. */
export interface RequestCertificateOptions {
  nodeName: string;
  certDir: string;
  /** Which certificate (default {@linkcode CLIENT_PROFILE}). */
  profile?: CertificateProfile;
  /** Subject alternative names to ask for (serving certificates). */
  sans?: SubjectAltNames;
  /** How often the request is polled (default 1 s). */
  pollIntervalMs?: number;
  /** Give up after this long (default 1 h). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Asks for a node certificate through `api` (upstream `requestNodeCertificate` and client-go's
 * certificate manager): reuses the key left by an interrupted attempt, sends the CSR (an
 * earlier one with the same name is waited for instead), waits for issuance, stores the pair
 * under `certDir` and removes the temporary key. Resolves to the stored pair (certificate
 * then key, PEM). TLS bootstrap calls it with the bootstrap identity, certificate rotation
 * with the node's own.
 */
export async function requestNodeCertificate(
  deps: { clock: Clock; logger: Logger },
  api: CsrApi,
  options: RequestCertificateOptions,
): Promise<string> {
  const { clock, logger } = deps;
  const profile = options.profile ?? CLIENT_PROFILE;
  const keyPath = `${options.certDir}/${profile.pairPrefix}.key.tmp`;
  const storedKey = await readFileIfExists(keyPath);
  const keys = storedKey
    ? await importNodeKey(storedKey)
    : await generateNodeKey();
  const csr = await makeNodeCsr(options.nodeName, keys, options.sans);
  if (!storedKey) await writeFileAtomic(keyPath, csr.keyPem);
  const usages = [...profile.usages];
  const name = csrObjectName(csr.publicKeyDer, options.nodeName, usages);
  const what = { csr: name, signer: profile.signerName };
  try {
    await api.createCsr({
      metadata: { name },
      spec: {
        request: btoa(csr.csrPem),
        signerName: profile.signerName,
        usages,
      },
    }, options.signal ? { signal: options.signal } : {});
    logger.info(`Requested a ${profile.kind} certificate`, what);
  } catch (e) {
    if (!(e instanceof ApiAlreadyExistsError)) throw e;
    logger.info(
      `Waiting for the earlier ${profile.kind} certificate request`,
      what,
    );
  }
  const certPem = await waitForCertificate(api, name, deps, options);
  const pair = certPem.trimEnd() + "\n" + csr.keyPem;
  await storePair(options.certDir, profile.pairPrefix, pair, clock.now());
  logger.info(
    `${profile.kind[0]!.toUpperCase()}${
      profile.kind.slice(1)
    } certificate issued`,
    what,
  );
  await Deno.remove(keyPath).catch(() => {});
  return pair;
}

/**
 * Makes sure `--kubeconfig` holds a usable client identity, bootstrapping one when it does
 * not. Returns true when a new certificate was obtained. Rejects when the request is denied,
 * times out or the signal aborts.
 */
export async function bootstrapClientCertificate(
  deps: BootstrapDeps,
  options: BootstrapOptions,
): Promise<boolean> {
  const { clock, logger } = deps;
  if (await kubeconfigUsable(options.kubeconfigPath, clock.now())) {
    logger.info("Kubeconfig has a valid client identity; no bootstrap needed", {
      path: options.kubeconfigPath,
    });
    return false;
  }
  const bootstrap = await loadKubeconfig(options.bootstrapKubeconfigPath);
  await Deno.mkdir(options.certDir, { recursive: true, mode: 0o755 });
  const current = `${options.certDir}/${CLIENT_PAIR_CURRENT}`;
  const existing = await readFileIfExists(current);
  if (existing && certificateValidAt(existing, clock.now())) {
    logger.info("Using the current client certificate pair", { path: current });
  } else {
    const api = deps.csrApiFor(bootstrap);
    try {
      await requestNodeCertificate(deps, api, options);
    } finally {
      api.close?.();
    }
  }
  await writeFileAtomic(
    options.kubeconfigPath,
    renderCertKubeconfig({
      server: bootstrap.server,
      ...(bootstrap.caPem ? { caPem: bootstrap.caPem } : {}),
      pairFile: current,
    }),
  );
  return true;
}
