/**
 * The few ASN.1 DER encodings a PKCS#10 certificate request needs (X.690 §8 and §10):
 * definite lengths, INTEGER, OBJECT IDENTIFIER, PrintableString/UTF8String, BIT STRING,
 * SEQUENCE, SET and context-specific constructed tags. Encoding only; nothing here parses.
 * @module
 */

import { concatBytes as concat } from "../util/bytes.ts";

/** Length octets: short form below 128, else long form with the fewest bytes. */
export function derLength(length: number): Uint8Array<ArrayBuffer> {
  if (length < 0x80) return Uint8Array.of(length);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** A tag-length-value with the given identifier octet. */
export function derTlv(
  tag: number,
  ...content: Uint8Array[]
): Uint8Array<ArrayBuffer> {
  const body = concat(content);
  return concat([Uint8Array.of(tag), derLength(body.length), body]);
}

/** SEQUENCE of the already encoded elements. */
export function derSequence(
  ...elements: Uint8Array[]
): Uint8Array<ArrayBuffer> {
  return derTlv(0x30, ...elements);
}

/** SET of the already encoded elements (a caller with several must sort them). */
export function derSet(...elements: Uint8Array[]): Uint8Array<ArrayBuffer> {
  return derTlv(0x31, ...elements);
}

/** INTEGER from unsigned big-endian magnitude bytes (minimal, positive). */
export function derUnsignedInteger(
  magnitude: Uint8Array,
): Uint8Array<ArrayBuffer> {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  let bytes = magnitude.subarray(start);
  if (bytes.length === 0) bytes = Uint8Array.of(0);
  if ((bytes[0]! & 0x80) !== 0) bytes = concat([Uint8Array.of(0), bytes]);
  return derTlv(0x02, bytes);
}

/** INTEGER of a small non-negative number. */
export function derSmallInteger(value: number): Uint8Array<ArrayBuffer> {
  const bytes: number[] = [];
  for (let n = value; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return derUnsignedInteger(Uint8Array.from(bytes.length ? bytes : [0]));
}

/** OBJECT IDENTIFIER from dotted text, e.g. "2.5.4.3". */
export function derOid(dotted: string): Uint8Array<ArrayBuffer> {
  const arcs = dotted.split(".").map((a) => {
    if (!/^\d+$/.test(a)) throw new RangeError(`Invalid OID "${dotted}"`);
    return Number(a);
  });
  if (arcs.length < 2 || arcs[0]! > 2) {
    throw new RangeError(`Invalid OID "${dotted}"`);
  }
  const out: number[] = [];
  const push = (arc: number) => {
    const group: number[] = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) {
      group.unshift(0x80 | (n & 0x7f));
    }
    out.push(...group);
  };
  push(arcs[0]! * 40 + arcs[1]!);
  for (const arc of arcs.slice(2)) push(arc);
  return derTlv(0x06, Uint8Array.from(out));
}

const PRINTABLE_REGEXP = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/**
 * A directory string as Go's `asn1` marshals `pkix.Name` values: PrintableString when every
 * character is in its set, else UTF8String.
 */
export function derDirectoryString(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new TextEncoder().encode(text);
  return derTlv(PRINTABLE_REGEXP.test(text) ? 0x13 : 0x0c, bytes);
}

/** BIT STRING with no unused bits. */
export function derBitString(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return derTlv(0x03, Uint8Array.of(0), bytes);
}

/** PEM armour of DER bytes with 64-column base64 lines. */
export function toPem(label: string, der: Uint8Array): string {
  let bin = "";
  for (const b of der) bin += String.fromCharCode(b);
  const b64 = btoa(bin);
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${
    lines.join("\n")
  }\n-----END ${label}-----\n`;
}
