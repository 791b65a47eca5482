/**
 * Just enough DER (ITU-T X.690) for the kubelet's own TLS code: a reader that walks an X.509
 * certificate to its subject and extensions (Deno's `X509Certificate` has no extended key
 * usage and flattens the subject to text), and a writer for the self-signed serving
 * certificate. Only definite lengths and single-byte tags, as DER requires for X.509.
 *
 * @module
 */

/** One decoded TLV: its tag byte and content bytes. */
export interface DerNode {
  tag: number;
  content: Uint8Array;
}

/** Tag bytes used here. */
export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** Splits `bytes` into its consecutive TLVs. @throws {SyntaxError} on truncated input. */
export function readDer(bytes: Uint8Array): DerNode[] {
  const nodes: DerNode[] = [];
  let at = 0;
  while (at < bytes.length) {
    const tag = bytes[at++]!;
    if ((tag & 0x1f) === 0x1f) throw new SyntaxError("Multi-byte DER tag");
    let length = bytes[at++];
    if (length === undefined) throw new SyntaxError("Truncated DER length");
    if (length & 0x80) {
      const count = length & 0x7f;
      if (count === 0 || count > 4) throw new SyntaxError("Bad DER length");
      length = 0;
      for (let i = 0; i < count; i++) {
        const byte = bytes[at++];
        if (byte === undefined) throw new SyntaxError("Truncated DER length");
        length = length * 256 + byte;
      }
    }
    if (at + length > bytes.length) throw new SyntaxError("Truncated DER");
    nodes.push({ tag, content: bytes.subarray(at, at + length) });
    at += length;
  }
  return nodes;
}

/** The children of a constructed node. */
export function children(node: DerNode): DerNode[] {
  return readDer(node.content);
}

/** An OBJECT IDENTIFIER's content as dotted text. */
export function oidText(content: Uint8Array): string {
  const parts: number[] = [];
  let value = 0;
  for (const byte of content) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      if (parts.length === 0) {
        const first = value < 80 ? Math.floor(value / 40) : 2;
        parts.push(first, value - first * 40);
      } else {
        parts.push(value);
      }
      value = 0;
    }
  }
  return parts.join(".");
}

function lengthBytes(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) {
    bytes.unshift(rest % 256);
  }
  return [0x80 | bytes.length, ...bytes];
}

/** One TLV from a tag and its content parts. */
export function der(tag: number, ...parts: Uint8Array[]): Uint8Array {
  const size = parts.reduce((n, p) => n + p.length, 0);
  const head = [tag, ...lengthBytes(size)];
  const out = new Uint8Array(head.length + size);
  out.set(head);
  let at = head.length;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** An OBJECT IDENTIFIER from dotted text. */
export function derOid(dotted: string): Uint8Array {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number);
  const bytes: number[] = [];
  for (const arc of [a * 40 + b, ...rest]) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) {
      chunk.unshift((v & 0x7f) | 0x80);
    }
    bytes.push(...chunk);
  }
  return der(TAG.oid, new Uint8Array(bytes));
}

/** A non-negative INTEGER from big-endian bytes (a leading 0 is added when needed). */
export function derUnsigned(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  const pad = trimmed[0]! & 0x80 ? new Uint8Array([0]) : new Uint8Array();
  return der(TAG.integer, pad, trimmed);
}

/** A UTF8String. */
export function derUtf8(text: string): Uint8Array {
  return der(TAG.utf8String, new TextEncoder().encode(text));
}

/** An X.509 time: UTCTime for 1950–2049, GeneralizedTime otherwise (RFC 5280 4.1.2.5). */
export function derTime(ms: number): Uint8Array {
  const text = new Date(ms).toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const year = Number(text.slice(0, 4));
  const utc = year >= 1950 && year < 2050;
  return der(
    utc ? TAG.utcTime : TAG.generalizedTime,
    new TextEncoder().encode(`${utc ? text.slice(2) : text}Z`),
  );
}
