/**
 * The node client certificate request of TLS bootstrap (upstream
 * `pkg/kubelet/certificate/bootstrap` `requestNodeCertificate` and client-go
 * `util/cert.MakeCSRFromTemplate`): an ECDSA P-256 key made with WebCrypto and a PKCS#10
 * request for subject `O=system:nodes, CN=system:node:<node>`, signed with ECDSA-SHA256.
 * @module
 */
import { createHash } from "node:crypto";
import {
  derBitString,
  derDirectoryString,
  derOid,
  derSequence,
  derSet,
  derSmallInteger,
  derTlv,
  derUnsignedInteger,
  toPem,
} from "./der.ts";

/** The signer that issues kubelet client certificates. */
export const KUBELET_CLIENT_SIGNER =
  "kubernetes.io/kube-apiserver-client-kubelet";

/** Usages of the request for an ECDSA key (RSA would add "key encipherment"). */
export const KUBELET_CLIENT_USAGES = ["digital signature", "client auth"];

const OID_ORGANIZATION = "2.5.4.10";
const OID_COMMON_NAME = "2.5.4.3";
const OID_ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const ECDSA = { name: "ECDSA", namedCurve: "P-256" } as const;

/** A key pair and the PEM of the request it signed. */
export interface NodeCsr {
  csrPem: string;
  /** PKCS#8 PEM of the private key. */
  keyPem: string;
  /** DER of the SubjectPublicKeyInfo (names the request). */
  publicKeyDer: Uint8Array;
}

/** `pkix.Name` with Organization then CommonName, one attribute per RDN (Go's order). */
function subjectName(organizations: string[], commonName: string): Uint8Array {
  const rdn = (oid: string, value: string) =>
    derSet(derSequence(derOid(oid), derDirectoryString(value)));
  return derSequence(
    ...organizations.map((o) => rdn(OID_ORGANIZATION, o)),
    rdn(OID_COMMON_NAME, commonName),
  );
}

/** WebCrypto's fixed-width r||s signature as the DER `Ecdsa-Sig-Value` X.509 expects. */
export function ecdsaSignatureToDer(raw: Uint8Array): Uint8Array {
  const half = raw.length / 2;
  return derSequence(
    derUnsignedInteger(raw.subarray(0, half)),
    derUnsignedInteger(raw.subarray(half)),
  );
}

/** Generates a new ECDSA P-256 key pair (extractable, so the key can be stored). */
export async function generateNodeKey(): Promise<CryptoKeyPair> {
  return await crypto.subtle.generateKey(ECDSA, true, ["sign", "verify"]);
}

/** Imports a PKCS#8 PEM private key and derives its public key (for reuse after a restart). */
export async function importNodeKey(keyPem: string): Promise<CryptoKeyPair> {
  const b64 = keyPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const der = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const privateKey = await crypto.subtle.importKey("pkcs8", der, ECDSA, true, [
    "sign",
  ]);
  const jwk = await crypto.subtle.exportKey("jwk", privateKey);
  delete jwk.d;
  jwk.key_ops = ["verify"];
  const publicKey = await crypto.subtle.importKey("jwk", jwk, ECDSA, true, [
    "verify",
  ]);
  return { privateKey, publicKey };
}

/** Builds the PKCS#10 request of `system:node:<nodeName>` signed by `keys`. */
export async function makeNodeCsr(
  nodeName: string,
  keys: CryptoKeyPair,
): Promise<NodeCsr> {
  const spki = new Uint8Array(
    await crypto.subtle.exportKey("spki", keys.publicKey),
  );
  const info = derSequence(
    derSmallInteger(0),
    subjectName(["system:nodes"], `system:node:${nodeName}`),
    spki,
    derTlv(0xa0), // no attributes: [0] IMPLICIT SET OF, empty
  );
  const raw = new Uint8Array(
    await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      keys.privateKey,
      info,
    ),
  );
  const request = derSequence(
    info,
    derSequence(derOid(OID_ECDSA_WITH_SHA256)),
    derBitString(ecdsaSignatureToDer(raw)),
  );
  const pkcs8 = new Uint8Array(
    await crypto.subtle.exportKey("pkcs8", keys.privateKey),
  );
  return {
    csrPem: toPem("CERTIFICATE REQUEST", request),
    keyPem: toPem("PRIVATE KEY", pkcs8),
    publicKeyDer: spki,
  };
}

function base64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The request's object name, stable for one key, subject and usages, so a restarted
 * kubelet finds its earlier request. Derived as upstream `digestedName` does: SHA-512/256
 * over the unpadded base64url of the SubjectPublicKeyInfo, the common name, each
 * organization and each usage, each followed by "|"; "node-csr-" and the digest in
 * unpadded base64url.
 */
export function csrObjectName(
  publicKeyDer: Uint8Array,
  nodeName: string,
  usages: string[] = KUBELET_CLIENT_USAGES,
): string {
  const enc = new TextEncoder();
  const hash = createHash("sha512-256");
  for (
    const part of [
      publicKeyDer,
      enc.encode(`system:node:${nodeName}`),
      enc.encode("system:nodes"),
      ...usages.map((u) => enc.encode(u)),
    ]
  ) {
    hash.update(base64Url(part));
    hash.update("|");
  }
  return `node-csr-${base64Url(new Uint8Array(hash.digest()))}`;
}
