/**
 * Client certificate authentication against `authentication.x509.clientCAFile`, after
 * k8s.io/apiserver's `request/x509` authenticator with `CommonNameUserConversion`, which runs
 * Go's `x509.Certificate.Verify` with `ExtKeyUsageClientAuth`: the chain must lead to one of
 * the CAs, every certificate on it must be valid now, every certificate on it that has an
 * extended key usage extension must allow `clientAuth` or `any` (`checkChainForKeyUsage`),
 * intermediates must be CAs and no CA may have more intermediates below it than its
 * `pathLenConstraint` (`Certificate.isValid`); the user is the subject's common name and the
 * groups its organizations.
 *
 * Stricter than upstream: the leaf must be an X.509 v3 certificate and not a CA. Deno's TLS
 * (node:tls over rustls/webpki) does not check the handshake signature of a v1 or v2 client
 * certificate, so such a certificate would authenticate whoever presents it, without its
 * private key; a CA certificate is no client's identity.
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
  /** Refused here although upstream accepts it (worth a warning: a client will break). */
  readonly stricter: boolean;
  constructor(
    message: string,
    options?: ErrorOptions & { stricter?: boolean },
  ) {
    super(message, options);
    this.name = "CertificateError";
    this.stricter = options?.stricter ?? false;
  }
}

const OID_COMMON_NAME = "2.5.4.3";
const OID_ORGANIZATION = "2.5.4.10";
const OID_EXT_KEY_USAGE = "2.5.29.37";
const OID_CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const OID_ANY_EXT_KEY_USAGE = "2.5.29.37.0";
const OID_BASIC_CONSTRAINTS = "2.5.29.19";
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
  /** 1, 2 or 3 (the DER field holds the version minus one; absent → 1). */
  version: number;
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
  const version = offset ? unsigned(children(fields[0]!)[0]) + 1 : 1;
  const subject = fields[offset + 4];
  if (!subject) throw new SyntaxError("Certificate without subject");
  const wrapped = fields.find((f) => f.tag === 0xa3);
  const extensions = wrapped ? children(children(wrapped)[0]!) : [];
  return { version, subject, extensions };
}

/** A small non-negative INTEGER's value. */
function unsigned(node: DerNode | undefined): number {
  if (!node || node.tag !== TAG.integer) {
    throw new SyntaxError("Expected a DER INTEGER");
  }
  let value = 0;
  for (const byte of node.content) value = value * 256 + byte;
  return value;
}

/** The value (the OCTET STRING's content) of the extension `oid`, or undefined. */
function extensionValue(
  extensions: DerNode[],
  oid: string,
): Uint8Array | undefined {
  for (const extension of extensions) {
    const parts = children(extension);
    if (parts[0] && oidText(parts[0].content) === oid) {
      return parts[parts.length - 1]!.content;
    }
  }
  return undefined;
}

/** What the chain checks read from one certificate. */
export interface CertificateFacts {
  version: number;
  /** basicConstraints cA. */
  ca: boolean;
  /** basicConstraints pathLenConstraint; undefined → no limit. */
  pathLen: number | undefined;
  /** Extended key usage OIDs; undefined → no extension. */
  usages: string[] | undefined;
}

/** The version, basic constraints and extended key usages of a DER certificate. */
export function certificateFacts(raw: Uint8Array): CertificateFacts {
  const { version, extensions } = tbsParts(raw);
  const constraints = extensionValue(extensions, OID_BASIC_CONSTRAINTS);
  let ca = false;
  let pathLen: number | undefined;
  if (constraints) {
    for (const field of children(readDer(constraints)[0]!)) {
      if (field.tag === TAG.boolean) ca = field.content[0] !== 0;
      if (field.tag === TAG.integer) pathLen = unsigned(field);
    }
  }
  return { version, ca, pathLen, usages: extendedKeyUsages(raw) };
}

/** Whether an extended key usage list lets a certificate take part in client authentication. */
function allowsClientAuth(usages: string[] | undefined): boolean {
  return !usages || usages.includes(OID_CLIENT_AUTH) ||
    usages.includes(OID_ANY_EXT_KEY_USAGE);
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
  const value = extensionValue(tbsParts(raw).extensions, OID_EXT_KEY_USAGE);
  if (!value) return undefined;
  return children(readDer(value)[0]!).map((oid) => oidText(oid.content));
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
      `certificate "${describe(cert)}" is not yet valid`,
    );
  }
  if (nowMs > cert.validToDate.getTime()) {
    throw new CertificateError(`certificate "${describe(cert)}" has expired`);
  }
}

function describe(cert: X509Certificate): string {
  return cert.subject.replaceAll("\n", ",");
}

/**
 * A CA on the chain with `below` intermediates under it: its pathLenConstraint must allow
 * them (Go's `Certificate.isValid`, TooManyIntermediates) and its extended key usages must
 * allow client authentication (Go's `checkChainForKeyUsage`: no extension or `any` allows
 * everything).
 */
function checkSigner(cert: X509Certificate, below: number): void {
  let facts: CertificateFacts;
  try {
    facts = certificateFacts(new Uint8Array(cert.raw));
  } catch (cause) {
    throw new CertificateError("unparsable certificate on the chain", {
      cause,
    });
  }
  if (facts.pathLen !== undefined && below > facts.pathLen) {
    throw new CertificateError(
      `certificate "${
        describe(cert)
      }" allows ${facts.pathLen} intermediate certificate(s) below it, the chain has ${below}`,
    );
  }
  if (!allowsClientAuth(facts.usages)) {
    throw new CertificateError(
      `certificate "${
        describe(cert)
      }" on the chain specifies an incompatible key usage`,
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
  let leafFacts: CertificateFacts;
  try {
    leaf = new X509Certificate(leafRaw);
    intermediates = rest.map((raw) => new X509Certificate(raw));
    leafFacts = certificateFacts(leafRaw);
  } catch (cause) {
    throw new CertificateError("unparsable client certificate", { cause });
  }
  const subject = describe(leaf);
  if (leafFacts.version !== 3) {
    throw new CertificateError(
      `certificate "${subject}" is X.509 version ${leafFacts.version}: only version 3 client certificates are accepted (the TLS layer does not prove that the client holds the key of an older one); issue it again with extensions`,
      { stricter: true },
    );
  }
  if (leafFacts.ca) {
    throw new CertificateError(
      `certificate "${subject}" is a CA certificate (basicConstraints CA:TRUE) and cannot be a client certificate`,
      { stricter: true },
    );
  }
  if (!allowsClientAuth(leafFacts.usages)) {
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
      // depth = intermediates between the leaf and the root.
      checkSigner(root, depth);
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
    // Go's isValid for an intermediateCertificate: it must be a CA (the find above) and
    // allow as many intermediates below it as there are.
    checkSigner(next, depth);
    current = next;
  }
  throw new CertificateError("certificate signed by unknown authority");
}
