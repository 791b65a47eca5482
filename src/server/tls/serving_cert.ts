/**
 * The kubelet API's serving certificate: `tlsCertFile`/`tlsPrivateKeyFile` when both are set,
 * else `kubelet.crt`/`kubelet.key` under `--cert-dir`, written once as a self-signed pair when
 * they cannot be read (upstream's `InitializeTLS` with `GenerateSelfSignedCertKey`). Ours is
 * one self-signed ECDSA P-256 certificate valid for a year (upstream writes an RSA leaf plus
 * its own throw-away CA); the API server does not verify it unless told to.
 *
 * @module
 */

import {
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  X509Certificate,
} from "node:crypto";
import { join } from "../../util/posix_path.ts";
import { der, derOid, derTime, derUnsigned, derUtf8, TAG } from "./der.ts";

/** A certificate chain and its key, PEM. */
export interface ServingPair {
  certPem: string;
  keyPem: string;
  /** Where they came from (for logs). */
  certFile: string;
  keyFile: string;
}

/** Options of {@linkcode loadServingPair}. */
export interface ServingPairOptions {
  tlsCertFile?: string | undefined;
  tlsPrivateKeyFile?: string | undefined;
  /** `--cert-dir` (default /var/lib/kubelet/pki). */
  certDir?: string | undefined;
  /** Names the self-signed certificate (the node's host name). */
  hostname: string;
  /** Now, in ms since the epoch. */
  nowMs: number;
}

const YEAR_MS = 365 * 24 * 3_600_000;
const IPV4_REGEXP = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function pem(label: string, bytes: Uint8Array): string {
  const lines = base64(bytes).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${
    lines.join("\n")
  }\n-----END ${label}-----\n`;
}

function extension(
  oid: string,
  critical: boolean,
  value: Uint8Array,
): Uint8Array {
  return der(
    TAG.sequence,
    derOid(oid),
    ...(critical ? [der(TAG.boolean, new Uint8Array([0xff]))] : []),
    der(TAG.octetString, value),
  );
}

function subjectAltName(host: string): Uint8Array {
  const names: Uint8Array[] = [];
  const v4 = IPV4_REGEXP.exec(host);
  if (v4) {
    names.push(der(0x87, new Uint8Array(v4.slice(1).map(Number))));
  } else {
    names.push(der(0x82, new TextEncoder().encode(host)));
  }
  if (host !== "localhost") {
    names.push(der(0x82, new TextEncoder().encode("localhost")));
  }
  names.push(der(0x87, new Uint8Array([127, 0, 0, 1])));
  return der(TAG.sequence, ...names);
}

/** A fresh self-signed serving pair for `host`, valid from an hour ago for a year. */
export function generateSelfSignedPair(
  host: string,
  nowMs: number,
): { certPem: string; keyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", {
    namedCurve: "P-256",
  });
  const spki = new Uint8Array(
    publicKey.export({ type: "spki", format: "der" }),
  );
  const algorithm = der(TAG.sequence, derOid("1.2.840.10045.4.3.2"));
  const name = der(
    TAG.sequence,
    der(
      TAG.set,
      der(
        TAG.sequence,
        derOid("2.5.4.3"),
        derUtf8(`${host}@${Math.floor(nowMs / 1000)}`),
      ),
    ),
  );
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0]! &= 0x7f;
  const tbs = der(
    TAG.sequence,
    der(0xa0, derUnsigned(new Uint8Array([2]))),
    derUnsigned(serial),
    algorithm,
    name,
    der(TAG.sequence, derTime(nowMs - 3_600_000), derTime(nowMs + YEAR_MS)),
    name,
    spki,
    der(
      0xa3,
      der(
        TAG.sequence,
        // keyUsage: digitalSignature
        extension(
          "2.5.29.15",
          true,
          der(TAG.bitString, new Uint8Array([7, 0x80])),
        ),
        // extKeyUsage: serverAuth
        extension(
          "2.5.29.37",
          false,
          der(TAG.sequence, derOid("1.3.6.1.5.5.7.3.1")),
        ),
        // basicConstraints: not a CA
        extension("2.5.29.19", true, der(TAG.sequence)),
        extension("2.5.29.17", false, subjectAltName(host)),
      ),
    ),
  );
  return signedPair(tbs, algorithm, privateKey, privateKey);
}

/**
 * Signs a to-be-signed certificate body with `signer` (SHA-256) and returns the certificate
 * and `key` (the subject's private key) as PEM.
 */
export function signedPair(
  tbs: Uint8Array,
  algorithm: Uint8Array,
  signer: KeyObject,
  key: KeyObject,
): { certPem: string; keyPem: string } {
  const signature = new Uint8Array(sign("sha256", tbs, signer));
  const certificate = der(
    TAG.sequence,
    tbs,
    algorithm,
    der(TAG.bitString, new Uint8Array([0]), signature),
  );
  return {
    certPem: pem("CERTIFICATE", certificate),
    keyPem: String(key.export({ type: "pkcs8", format: "pem" })),
  };
}

async function readPair(
  certFile: string,
  keyFile: string,
): Promise<ServingPair> {
  const certPem = await Deno.readTextFile(certFile);
  const keyPem = await Deno.readTextFile(keyFile);
  // Fail here, naming the files, rather than at the first handshake.
  const cert = new X509Certificate(certPem);
  if (!cert.checkPrivateKey(createPrivateKey(keyPem))) {
    throw new TypeError(
      `The private key "${keyFile}" does not match the certificate "${certFile}"`,
    );
  }
  return { certPem, keyPem, certFile, keyFile };
}

/** Where the self-signed pair lives when no pair is configured. */
export function selfSignedFiles(
  certDir: string | undefined,
): { certFile: string; keyFile: string } {
  const dir = certDir || "/var/lib/kubelet/pki";
  return {
    certFile: join(dir, "kubelet.crt"),
    keyFile: join(dir, "kubelet.key"),
  };
}

/**
 * The configured pair, or the one under the cert dir (generated and written when it cannot be
 * read). @throws when configured files cannot be read or do not match.
 */
export async function loadServingPair(
  options: ServingPairOptions,
): Promise<ServingPair> {
  if (options.tlsCertFile && options.tlsPrivateKeyFile) {
    return await readPair(options.tlsCertFile, options.tlsPrivateKeyFile);
  }
  const { certFile, keyFile } = selfSignedFiles(options.certDir);
  const certDir = options.certDir || "/var/lib/kubelet/pki";
  try {
    return await readPair(certFile, keyFile);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const pair = generateSelfSignedPair(options.hostname, options.nowMs);
  await Deno.mkdir(certDir, { recursive: true, mode: 0o755 });
  await Deno.writeTextFile(keyFile, pair.keyPem, { mode: 0o600 });
  await Deno.writeTextFile(certFile, pair.certPem, { mode: 0o644 });
  return { ...pair, certFile, keyFile };
}
