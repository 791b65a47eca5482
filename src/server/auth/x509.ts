/**
 * Client certificate authentication against `authentication.x509.clientCAFile`, after
 * k8s.io/apiserver's `request/x509` authenticator with `CommonNameUserConversion`: the chain
 * must lead to one of the CAs, every certificate on it must be valid now, the leaf must allow
 * client authentication (no extended key usage, `clientAuth` or `any`), intermediates must be
 * CAs; the user is the subject's common name and the groups its organizations.
 *
 * The TLS layer (node:tls) hands over the presented chain but its own verdict is not used:
 * everything is checked here, on the injected clock.
 *
 * @module
 */

import { X509Certificate } from "node:crypto";
import { children, type DerNode, oidText, readDer, TAG } from "../tls/der.ts";

/** Who a verified client certificate names. */
export interface CertificateUser {
  name: string;
  groups: string[];
}

/** The certificate was presented but does not authenticate anyone; `message` says why. */
export class CertificateError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CertificateError";
  }
}

const OID_COMMON_NAME = "2.5.4.3";
const OID_ORGANIZATION = "2.5.4.10";
const OID_EXT_KEY_USAGE = "2.5.29.37";
const OID_CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const OID_ANY_EXT_KEY_USAGE = "2.5.29.37.0";
/** Longest chain followed (leaf, intermediates, root). */
const MAX_CHAIN = 10;

/** Parses every certificate of a PEM bundle. @throws {SyntaxError} when there is none. */
export function parseCertificateBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(
    /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
  ) ?? [];
  if (blocks.length === 0) {
    throw new SyntaxError("No PEM certificate found in the bundle");
  }
  return blocks.map((block) => new X509Certificate(block));
}

interface TbsParts {
  subject: DerNode;
  extensions: DerNode[];
}

/** Subject and extensions of a certificate's TBSCertificate. */
function tbsParts(raw: Uint8Array): TbsParts {
  const [certificate] = readDer(raw);
  if (!certificate || certificate.tag !== TAG.sequence) {
    throw new SyntaxError("Not a DER certificate");
  }
  const [tbs] = children(certificate);
  if (!tbs) throw new SyntaxError("Certificate without TBSCertificate");
  const fields = children(tbs);
  // version [0] is optional; then serial, signature, issuer, validity, subject.
  const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[offset + 4];
  if (!subject) throw new SyntaxError("Certificate without subject");
  const wrapped = fields.find((f) => f.tag === 0xa3);
  const extensions = wrapped ? children(children(wrapped)[0]!) : [];
  return { subject, extensions };
}

/** Every (type OID, text) of a Name, in order. */
function nameAttributes(name: DerNode): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const rdn of children(name)) {
    for (const attribute of children(rdn)) {
      const [type, value] = children(attribute);
      if (!type || !value) continue;
      out.push([
        oidText(type.content),
        new TextDecoder().decode(value.content),
      ]);
    }
  }
  return out;
}

/** The extended key usage OIDs, or undefined when the extension is absent. */
export function extendedKeyUsages(raw: Uint8Array): string[] | undefined {
  for (const extension of tbsParts(raw).extensions) {
    const parts = children(extension);
    if (!parts[0] || oidText(parts[0].content) !== OID_EXT_KEY_USAGE) continue;
    const value = parts[parts.length - 1]!;
    return children(children(value)[0]!).map((oid) => oidText(oid.content));
  }
  return undefined;
}

/** The user a certificate's subject names (last CN, all O in order). */
export function certificateUser(raw: Uint8Array): CertificateUser {
  let name = "";
  const groups: string[] = [];
  for (const [type, value] of nameAttributes(tbsParts(raw).subject)) {
    if (type === OID_COMMON_NAME) name = value;
    if (type === OID_ORGANIZATION) groups.push(value);
  }
  return { name, groups };
}

function checkValidity(cert: X509Certificate, nowMs: number): void {
  if (nowMs < cert.validFromDate.getTime()) {
    throw new CertificateError(
      `certificate "${cert.subject.replaceAll("\n", ",")}" is not yet valid`,
    );
  }
  if (nowMs > cert.validToDate.getTime()) {
    throw new CertificateError(
      `certificate "${cert.subject.replaceAll("\n", ",")}" has expired`,
    );
  }
}

function issuedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/** A chain that verified: its user and the time window in which every certificate is valid. */
interface Verified {
  user: CertificateUser;
  fromMs: number;
  toMs: number;
}

/**
 * Chains that verified, per root set: checking the signatures costs about 2 ms per request,
 * and clients present the same chain on every request. A hit still checks the validity
 * window against the current time; anything else is verified in full.
 */
const verified = new WeakMap<
  readonly X509Certificate[],
  Map<string, Verified>
>();
const MAX_VERIFIED = 1000;

/**
 * Keys of chains seen: the listener hands over the same chain array for every request on a
 * connection, and spelling out a chain's bytes costs about 0.03 ms.
 */
const keys = new WeakMap<readonly Uint8Array[], string>();

function chainKey(chain: readonly Uint8Array[]): string {
  const known = keys.get(chain);
  if (known !== undefined) return known;
  let key = "";
  for (const der of chain) {
    for (let i = 0; i < der.length; i++) key += String.fromCharCode(der[i]!);
    key += "|";
  }
  keys.set(chain, key);
  return key;
}

/**
 * Verifies a presented chain (leaf first, DER) against `options.roots` at `options.nowMs` and
 * returns its user (from a cache when the same chain verified before and is still valid).
 * @throws {CertificateError} when the chain does not lead to a root, a certificate on it is
 * out of its validity, the leaf may not authenticate clients, or it names no user.
 */
export function verifyClientCertificate(
  chain: readonly Uint8Array[],
  options: { roots: readonly X509Certificate[]; nowMs: number },
): CertificateUser {
  const { roots, nowMs } = options;
  const [leafRaw, ...rest] = chain;
  if (!leafRaw) throw new CertificateError("no client certificate");
  let cache = verified.get(roots);
  if (!cache) verified.set(roots, cache = new Map());
  const key = chainKey(chain);
  const hit = cache.get(key);
  if (hit && nowMs >= hit.fromMs && nowMs <= hit.toMs) {
    return { name: hit.user.name, groups: [...hit.user.groups] };
  }
  let leaf: X509Certificate;
  let intermediates: X509Certificate[];
  try {
    leaf = new X509Certificate(leafRaw);
    intermediates = rest.map((raw) => new X509Certificate(raw));
  } catch (cause) {
    throw new CertificateError("unparsable client certificate", { cause });
  }
  const usages = extendedKeyUsages(leafRaw);
  if (
    usages &&
    !usages.includes(OID_CLIENT_AUTH) && !usages.includes(OID_ANY_EXT_KEY_USAGE)
  ) {
    throw new CertificateError(
      "certificate specifies an incompatible key usage",
    );
  }
  let current = leaf;
  let fromMs = -Infinity;
  let toMs = Infinity;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    checkValidity(current, nowMs);
    fromMs = Math.max(fromMs, current.validFromDate.getTime());
    toMs = Math.min(toMs, current.validToDate.getTime());
    const root = roots.find((r) => issuedBy(current, r));
    if (root) {
      checkValidity(root, nowMs);
      const user = certificateUser(leafRaw);
      if (!user.name) {
        throw new CertificateError("certificate has an empty common name");
      }
      if (cache.size >= MAX_VERIFIED) cache.delete(cache.keys().next().value!);
      cache.set(key, {
        user: { name: user.name, groups: [...user.groups] },
        fromMs: Math.max(fromMs, root.validFromDate.getTime()),
        toMs: Math.min(toMs, root.validToDate.getTime()),
      });
      return user;
    }
    const next = intermediates.find((c) =>
      c !== current && c.ca && issuedBy(current, c)
    );
    if (!next) break;
    current = next;
  }
  throw new CertificateError("certificate signed by unknown authority");
}
