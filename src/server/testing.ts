/**
 * Test helpers of the kubelet API: certificates made on the spot (CA, client and server
 * certificates with chosen validity and extended key usage), without openssl.
 *
 * @module
 */

import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  X509Certificate,
} from "node:crypto";
import {
  children,
  der,
  derOid,
  derTime,
  derUnsigned,
  derUtf8,
  readDer,
  TAG,
} from "./tls/der.ts";
import { signedPair } from "./tls/serving_cert.ts";

/** A certificate and its key, PEM. */
export interface TestPair {
  certPem: string;
  keyPem: string;
}

/** Options of {@linkcode makeCertificate}. */
export interface MakeCertificateOptions {
  commonName: string;
  organizations?: string[];
  /** Signs the certificate; omitted → self-signed. */
  issuer?: TestPair;
  /** Default: an hour ago. */
  notBefore?: number;
  /** Default: in a day. */
  notAfter?: number;
  /** Extended key usage OIDs; omitted → `clientAuth`; `[]` → no extension. */
  extKeyUsages?: string[];
  ca?: boolean;
  /** A CA's `pathLenConstraint`; omitted → none. */
  pathLen?: number;
  /** X.509 version; 1 and 2 carry no extensions (what `openssl x509 -req` makes). Default 3. */
  version?: 1 | 2 | 3;
  /** Adds a critical extension of a private OID that no verifier knows. */
  unknownCriticalExtension?: boolean;
  /** The new key's type (default `ec`, P-256). */
  keyType?: "ec" | "rsa";
  /** Subject alternative names (IPv4 or DNS). */
  altNames?: string[];
}

/** OIDs of the common extended key usages. */
export const EKU = {
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

function name(commonName: string, organizations: string[]): Uint8Array {
  const rdn = (oid: string, value: string) =>
    der(TAG.set, der(TAG.sequence, derOid(oid), derUtf8(value)));
  return der(
    TAG.sequence,
    ...organizations.map((o) => rdn("2.5.4.10", o)),
    rdn("2.5.4.3", commonName),
  );
}

function extension(oid: string, value: Uint8Array): Uint8Array {
  return der(TAG.sequence, derOid(oid), der(TAG.octetString, value));
}

function signatureAlgorithm(key: KeyObject): Uint8Array {
  return key.asymmetricKeyType === "rsa"
    ? der(TAG.sequence, derOid("1.2.840.113549.1.1.11"), der(TAG.null))
    : der(TAG.sequence, derOid("1.2.840.10045.4.3.2"));
}

/** Makes a certificate (and a fresh P-256 key) as the options say. */
export function makeCertificate(options: MakeCertificateOptions): TestPair {
  const { privateKey, publicKey } = options.keyType === "rsa"
    ? generateKeyPairSync("rsa", { modulusLength: 2048 })
    : generateKeyPairSync("ec", { namedCurve: "P-256" });
  const now = Date.now();
  const signer = options.issuer
    ? createPrivateKey(options.issuer.keyPem)
    : privateKey;
  const issuerName = options.issuer
    ? subjectDer(options.issuer.certPem)
    : name(options.commonName, options.organizations ?? []);
  const algorithm = signatureAlgorithm(signer);
  const extensions: Uint8Array[] = [];
  const usages = options.extKeyUsages ?? [EKU.clientAuth];
  if (usages.length) {
    extensions.push(
      extension("2.5.29.37", der(TAG.sequence, ...usages.map(derOid))),
    );
  }
  extensions.push(
    extension(
      "2.5.29.19",
      options.ca
        ? der(
          TAG.sequence,
          der(TAG.boolean, new Uint8Array([0xff])),
          ...(options.pathLen === undefined
            ? []
            : [derUnsigned(new Uint8Array([options.pathLen]))]),
        )
        : der(TAG.sequence),
    ),
  );
  if (options.ca) {
    extensions.push(
      extension("2.5.29.15", der(TAG.bitString, new Uint8Array([1, 0x06]))),
    );
  }
  if (options.unknownCriticalExtension) {
    extensions.push(der(
      TAG.sequence,
      derOid("1.3.6.1.4.1.99999.1"),
      der(TAG.boolean, new Uint8Array([0xff])),
      der(TAG.octetString, der(TAG.null)),
    ));
  }
  if (options.altNames?.length) {
    extensions.push(extension(
      "2.5.29.17",
      der(
        TAG.sequence,
        ...options.altNames.map((n) =>
          /^\d+\.\d+\.\d+\.\d+$/.test(n)
            ? der(0x87, new Uint8Array(n.split(".").map(Number)))
            : der(0x82, new TextEncoder().encode(n))
        ),
      ),
    ));
  }
  const serial = crypto.getRandomValues(new Uint8Array(12));
  serial[0]! &= 0x7f;
  const version = options.version ?? 3;
  const tbs = der(
    TAG.sequence,
    ...(version === 1
      ? []
      : [der(0xa0, derUnsigned(new Uint8Array([version - 1])))]),
    derUnsigned(serial),
    algorithm,
    issuerName,
    der(
      TAG.sequence,
      derTime(options.notBefore ?? now - 3_600_000),
      derTime(options.notAfter ?? now + 86_400_000),
    ),
    name(options.commonName, options.organizations ?? []),
    new Uint8Array(publicKey.export({ type: "spki", format: "der" })),
    ...(version === 3 ? [der(0xa3, der(TAG.sequence, ...extensions))] : []),
  );
  return signedPair(tbs, algorithm, signer, privateKey);
}

function subjectDer(certPem: string): Uint8Array {
  const raw = new Uint8Array(new X509Certificate(certPem).raw);
  const tbs = children(children(readDer(raw)[0]!)[0]!);
  const offset = tbs[0]?.tag === 0xa0 ? 1 : 0;
  const subject = tbs[offset + 4]!;
  return der(subject.tag, subject.content);
}

/** The public key of a PEM certificate (for assertions). */
export function publicKeyOf(certPem: string): KeyObject {
  return createPublicKey(certPem);
}

/**
 * A slow-loris client on each connection: one byte of a never-ending request head every
 * `intervalMs`. Each promise resolves to the ms until the server cut the connection off
 * (Infinity when it never did within the head's 240 bytes).
 */
export function trickleHeaders(
  conns: readonly Deno.Conn[],
  intervalMs = 50,
): Promise<number>[] {
  const started = Date.now();
  const bytes = new TextEncoder().encode(
    `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ${"a".repeat(200)}`,
  );
  return conns.map(async (conn) => {
    for (const byte of bytes) {
      try {
        await conn.write(Uint8Array.of(byte));
      } catch {
        return Date.now() - started;
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    return Infinity;
  });
}
