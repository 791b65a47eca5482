/**
 * The node's certificate requests (upstream `pkg/kubelet/certificate/bootstrap`
 * `requestNodeCertificate`, the serving certificate template of
 * `pkg/kubelet/certificate/kubelet.go` and client-go `util/cert.MakeCSRFromTemplate`): an
 * ECDSA P-256 key made with WebCrypto and a PKCS#10 request for subject
 * `O=system:nodes, CN=system:node:<node>`, signed with ECDSA-SHA256; a serving request also
 * carries the node's addresses as subject alternative names.
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

/** The signer that issues kubelet serving certificates (never auto-approved). */
export const KUBELET_SERVING_SIGNER = "kubernetes.io/kubelet-serving";

/** Usages of a serving request for an ECDSA key (RSA would add "key encipherment"). */
export const KUBELET_SERVING_USAGES = ["digital signature", "server auth"];

/** Subject alternative names of a serving request. */
export interface SubjectAltNames {
  dnsNames: readonly string[];
  /** IPv4 or IPv6 addresses, textual. */
  ips: readonly string[];
}

const OID_ORGANIZATION = "2.5.4.10";
const OID_COMMON_NAME = "2.5.4.3";
const OID_ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const OID_EXTENSION_REQUEST = "1.2.840.113549.1.9.14";
const OID_SUBJECT_ALT_NAME = "2.5.29.17";
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

/** An IP address as the 4 or 16 bytes of an `iPAddress` general name. */
export function ipBytes(ip: string): Uint8Array {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) {
    const parts = ip.split(".").map(Number);
    if (parts.every((p) => p <= 255)) return Uint8Array.from(parts);
  } else if (ip.includes(":")) {
    const [head = "", tail, extra] = ip.split("::");
    const groups = (text: string | undefined) =>
      text ? text.split(":").map((g) => parseInt(g, 16)) : [];
    const left = groups(head);
    const right = groups(tail);
    const fill = 8 - left.length - right.length;
    const all = tail === undefined
      ? left
      : [...left, ...new Array(fill).fill(0), ...right];
    if (
      extra === undefined && all.length === 8 &&
      (tail === undefined || fill > 0) &&
      all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ) {
      return Uint8Array.from(all.flatMap((g) => [g >> 8, g & 0xff]));
    }
  }
  throw new RangeError(`"${ip}" is not an IP address`);
}

/** The `extensionRequest` attribute asking for a subjectAltName extension. */
function altNamesAttribute(sans: SubjectAltNames): Uint8Array {
  const enc = new TextEncoder();
  const names = derSequence(
    ...sans.dnsNames.map((d) => derTlv(0x82, enc.encode(d))),
    ...sans.ips.map((ip) => derTlv(0x87, ipBytes(ip))),
  );
  const extension = derSequence(
    derOid(OID_SUBJECT_ALT_NAME),
    derTlv(0x04, names),
  );
  return derSequence(
    derOid(OID_EXTENSION_REQUEST),
    derSet(derSequence(extension)),
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

/**
 * Builds the PKCS#10 request of `system:node:<nodeName>` signed by `keys`, with `sans` as
 * requested subject alternative names when given.
 */
export async function makeNodeCsr(
  nodeName: string,
  keys: CryptoKeyPair,
  sans?: SubjectAltNames,
): Promise<NodeCsr> {
  const spki = new Uint8Array(
    await crypto.subtle.exportKey("spki", keys.publicKey),
  );
  const info = derSequence(
    derSmallInteger(0),
    subjectName(["system:nodes"], `system:node:${nodeName}`),
    spki,
    // attributes: [0] IMPLICIT SET OF, empty without names
    sans && (sans.dnsNames.length || sans.ips.length)
      ? derTlv(0xa0, altNamesAttribute(sans))
      : derTlv(0xa0),
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
