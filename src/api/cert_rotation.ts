/**
 * Node certificate rotation (upstream client-go `util/certificate.Manager` as the kubelet
 * uses it): for the client certificate (`rotateCertificates`) and the serving certificate
 * (`serverTLSBootstrap`), a new key and certificate are requested with the node's own
 * identity when the current certificate reaches a jittered 70–90 % of its lifetime (at once
 * when there is none), stored under `--cert-dir`, and handed to `onRotated` so the API
 * client or the kubelet API listener switches to them. Failures are retried with back-off
 * from 1 s doubling to 5 min.
 * @module
 */
import { X509Certificate } from "node:crypto";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import {
  type CertificateProfile,
  CLIENT_PROFILE,
  requestNodeCertificate,
} from "./bootstrap.ts";
import type { SubjectAltNames } from "./csr.ts";
import type { CsrApi } from "./types.ts";
import { errorMessage } from "../util/error_message.ts";

/** The validity window of a certificate, in ms since the epoch. */
export interface CertificateLifetime {
  notBefore: number;
  notAfter: number;
}

/** The validity of the first certificate in a PEM bundle; undefined when it does not parse. */
export function certificateLifetime(
  pem: string,
): CertificateLifetime | undefined {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(
    pem,
  );
  if (!m) return undefined;
  try {
    const cert = new X509Certificate(m[0]);
    return {
      notBefore: Date.parse(cert.validFrom),
      notAfter: Date.parse(cert.validTo),
    };
  } catch {
    return undefined;
  }
}

/**
 * When to rotate (upstream `nextRotationDeadline`): notBefore plus 70 % of the lifetime
 * and a random further 0–20 %. `random` returns a number in [0, 1).
 */
export function rotationDeadline(
  lifetime: CertificateLifetime,
  random: () => number,
): number {
  const total = lifetime.notAfter - lifetime.notBefore;
  return lifetime.notBefore + total * (0.7 + 0.2 * random());
}

/** Dependencies of {@linkcode CertificateRotator}. */
export interface RotatorDeps {
  clock: Clock;
  logger: Logger;
  /** The CSR API with the node's current identity. */
  api: CsrApi;
  /** Receives each new pair (certificate then key, PEM). */
  onRotated(pairPem: string): void | Promise<void>;
  /** Jitter source (default Math.random). */
  random?: () => number;
  /** Reads a PEM's validity (default: X.509 parsing). */
  lifetime?: (pem: string) => CertificateLifetime | undefined;
}

/** Options of {@linkcode CertificateRotator}. */
export interface RotatorOptions {
  nodeName: string;
  certDir: string;
  /** Which certificate (default {@linkcode CLIENT_PROFILE}). */
  profile?: CertificateProfile;
  /**
   * The names a serving request asks for, read at each request; undefined → not yet
   * known, the request waits (upstream's template function returning nil).
   */
  sans?: () => SubjectAltNames | undefined;
  /** The pair in use now; empty → none yet, one is requested at once. */
  currentPairPem: string;
  /** How often a request is polled (default 1 s). */
  pollIntervalMs?: number;
}

const MIN_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 5 * 60_000;

/** Rotates a node certificate before it expires, until the signal aborts. */
export class CertificateRotator {
  #deps: RotatorDeps;
  #options: RotatorOptions;
  #current: string;
  #kind: CertificateProfile;

  constructor(deps: RotatorDeps, options: RotatorOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#current = options.currentPairPem;
    this.#kind = options.profile ?? CLIENT_PROFILE;
  }

  /** The pair in use now. */
  get currentPairPem(): string {
    return this.#current;
  }

  /** When the current certificate is due; now when its validity cannot be read. */
  deadline(): number {
    const lifetime = (this.#deps.lifetime ?? certificateLifetime)(
      this.#current,
    );
    return lifetime
      ? rotationDeadline(lifetime, this.#deps.random ?? Math.random)
      : this.#deps.clock.now();
  }

  /** One rotation now: request, store, hand over. Rejects when it fails. */
  async rotate(signal: AbortSignal): Promise<void> {
    const sans = this.#options.sans?.();
    if (this.#options.sans && !sans) {
      throw new Error("the node has no address to put in the certificate yet");
    }
    const pair = await requestNodeCertificate(this.#deps, this.#deps.api, {
      nodeName: this.#options.nodeName,
      certDir: this.#options.certDir,
      profile: this.#kind,
      ...(sans ? { sans } : {}),
      signal,
      ...(this.#options.pollIntervalMs !== undefined
        ? { pollIntervalMs: this.#options.pollIntervalMs }
        : {}),
    });
    this.#current = pair;
    await this.#deps.onRotated(pair);
    this.#deps.logger.info(`Rotated the ${this.#kind.kind} certificate`, {
      node: this.#options.nodeName,
    });
  }

  /** Waits for each deadline and rotates, retrying with back-off. Never throws. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#deps;
    const sleep = (ms: number) =>
      clock.sleep(Math.max(0, ms), signal).then(() => true, () => false);
    let backoff = MIN_BACKOFF_MS;
    while (!signal.aborted) {
      const wait = this.deadline() - clock.now();
      if (wait > 0) {
        logger.info(`Waiting to rotate the ${this.#kind.kind} certificate`, {
          in: `${Math.round(wait / 1000)}s`,
        });
        if (!(await sleep(wait))) return;
      }
      try {
        await this.rotate(signal);
        backoff = MIN_BACKOFF_MS;
      } catch (e) {
        if (signal.aborted) return;
        logger.error(
          `Failed to rotate the ${this.#kind.kind} certificate, will retry`,
          {
            interval: `${backoff}ms`,
            err: errorMessage(e),
          },
        );
        if (!(await sleep(backoff))) return;
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }
}

/** The rotator with the client profile by default (the name join and its tests use). */
export const ClientCertificateRotator = CertificateRotator;
