/**
 * Decodes an HTTP/1.1 response read from a raw connection, for the HTTPS probe and hook
 * client ({@link ./pod_http.ts}) that writes its requests itself. Pure: the caller appends
 * the bytes read so far and calls again until the result is complete.
 *
 * Only as much body as the caller wants (`limit`) is kept: probes read 10 KiB of it at
 * most, hooks none, so the connection is closed as soon as that much has arrived.
 *
 * @module
 */

import { concatBytes } from "../../util/bytes.ts";

/** A decoded response head and (a prefix of) its body. */
export interface Http1Response {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array;
}

/** Largest response head accepted (status line and headers). */
export const MAX_HEAD_BYTES = 64 * 1024;

const CRLF = [13, 10];

function indexOfSequence(bytes: Uint8Array, seq: number[], from = 0): number {
  outer: for (let i = from; i + seq.length <= bytes.length; i++) {
    for (let j = 0; j < seq.length; j++) {
      if (bytes[i + j] !== seq[j]) continue outer;
    }
    return i;
  }
  return -1;
}

const HEAD_END = [13, 10, 13, 10];
const latin1 = new TextDecoder("latin1");

function parseHead(
  text: string,
): { status: number; statusText: string; headers: [string, string][] } {
  const [statusLine = "", ...lines] = text.split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
  if (!match) {
    throw new Error(`malformed HTTP response: status line "${statusLine}"`);
  }
  const headers: [string, string][] = [];
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error(`malformed HTTP header line "${line}"`);
    headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return { status: Number(match[1]), statusText: match[2] ?? "", headers };
}

function header(headers: [string, string][], name: string): string | undefined {
  return headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

/** Statuses that never carry a body. */
function bodyless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/**
 * A chunked body decoded as far as `bytes` goes: the data and whether the last chunk was
 * seen (or `limit` bytes are in).
 */
function decodeChunked(
  bytes: Uint8Array,
  limit: number,
): { data: Uint8Array; complete: boolean } {
  const parts: Uint8Array[] = [];
  let size = 0;
  let at = 0;
  for (;;) {
    if (size >= limit) break;
    const lineEnd = indexOfSequence(bytes, CRLF, at);
    if (lineEnd < 0) return { data: concatBytes(parts), complete: false };
    const sizeText = latin1.decode(bytes.subarray(at, lineEnd)).split(";")[0]!
      .trim();
    if (!/^[0-9a-fA-F]+$/.test(sizeText)) {
      throw new Error(`malformed chunk size "${sizeText}"`);
    }
    const chunk = parseInt(sizeText, 16);
    if (chunk === 0) return { data: concatBytes(parts), complete: true };
    const start = lineEnd + 2;
    const available = bytes.subarray(
      start,
      Math.min(start + chunk, bytes.length),
    );
    parts.push(available);
    size += available.length;
    if (available.length < chunk) break;
    at = start + chunk + 2;
  }
  const data = concatBytes(parts);
  return { data, complete: data.length >= limit };
}

/**
 * The response in `bytes`, or undefined while more is needed. `ended` says the peer closed
 * the connection (a body without length then ends there). Interim 1xx responses are
 * skipped. Throws on a malformed or oversized head, or a connection closed before the head.
 */
export function decodeHttp1Response(
  bytes: Uint8Array,
  ended: boolean,
  limit: number,
): Http1Response | undefined {
  let rest = bytes;
  for (;;) {
    const headEnd = indexOfSequence(rest, HEAD_END);
    if (headEnd < 0) {
      if (rest.length > MAX_HEAD_BYTES) {
        throw new Error("HTTP response head is larger than 64 KiB");
      }
      if (ended) throw new Error("connection closed before the HTTP response");
      return undefined;
    }
    const head = parseHead(latin1.decode(rest.subarray(0, headEnd)));
    const body = rest.subarray(headEnd + 4);
    if (head.status >= 100 && head.status < 200 && head.status !== 101) {
      rest = body;
      continue;
    }
    if (bodyless(head.status)) return { ...head, body: new Uint8Array() };
    const chunked = /(^|,)\s*chunked\s*$/i.test(
      header(head.headers, "transfer-encoding") ?? "",
    );
    if (chunked) {
      const { data, complete } = decodeChunked(body, limit);
      if (!complete && !ended) return undefined;
      return { ...head, body: data.subarray(0, limit) };
    }
    const lengthText = header(head.headers, "content-length");
    const length = lengthText === undefined ? Infinity : Number(lengthText);
    if (!Number.isInteger(length) && length !== Infinity) {
      throw new Error(`malformed Content-Length "${lengthText}"`);
    }
    const want = Math.min(length, limit);
    if (body.length < want && !ended) return undefined;
    return { ...head, body: body.slice(0, want) };
  }
}
