/**
 * Container spec hash, stored in the `io.kubernetes.container.hash` annotation and compared on
 * every sync: a running container whose hash differs from its spec is restarted.
 *
 * Like upstream kubelet (v1.31+), only the container's `name` and `image` take part: the API only
 * allows `image` to change on a live pod. The input is the JSON object `{"image":…,"name":…}`
 * (keys sorted, as Go's encoding/json writes maps), rendered the way Go's deep-hash printer
 * renders a byte slice (`([]uint8)[123 34 …]`), hashed with FNV-1a 32-bit and written as
 * lower-case hex without padding. The exact printer input is unverified against a real kubelet;
 * the hash is stable and deterministic for our own containers either way.
 *
 * @module
 */

import type { Container } from "../types.ts";

const FNV32_OFFSET = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1a 32-bit over `bytes`, as an unsigned integer. */
export function fnv32a(bytes: Uint8Array): number {
  let hash = FNV32_OFFSET;
  for (const byte of bytes) {
    hash ^= byte;
    hash = Math.imul(hash, FNV32_PRIME) >>> 0;
  }
  return hash >>> 0;
}

/** Escapes a string the way Go's encoding/json does by default (HTML-safe). */
function goJsonString(value: string): string {
  return JSON.stringify(value)
    .replaceAll("<", "\\u003c")
    .replaceAll(">", "\\u003e")
    .replaceAll("&", "\\u0026")
    .replaceAll("\u2028", "\\u2028")
    .replaceAll("\u2029", "\\u2029");
}

const ENCODER = new TextEncoder();
const PREFIX = ENCODER.encode("([]uint8)[");
const SPACE = 0x20;
const CLOSE = 0x5d;
const DIGIT_0 = 0x30;

function mix(hash: number, byte: number): number {
  return Math.imul(hash ^ byte, FNV32_PRIME) >>> 0;
}

/** Hash of the fields of `container` whose change requires a restart, as a number. */
export function hashContainer(
  container: Pick<Container, "name" | "image">,
): number {
  const json = `{"image":${goJsonString(container.image ?? "")},"name":${
    goJsonString(container.name)
  }}`;
  // streams the printer's text (`([]uint8)[b0 b1 …]`) through FNV without building it
  let hash = FNV32_OFFSET;
  for (const byte of PREFIX) hash = mix(hash, byte);
  const bytes = ENCODER.encode(json);
  for (let i = 0; i < bytes.length; i++) {
    if (i > 0) hash = mix(hash, SPACE);
    const b = bytes[i]!;
    if (b >= 100) hash = mix(hash, DIGIT_0 + Math.floor(b / 100));
    if (b >= 10) hash = mix(hash, DIGIT_0 + Math.floor(b / 10) % 10);
    hash = mix(hash, DIGIT_0 + b % 10);
  }
  return mix(hash, CLOSE);
}

const CACHE = new WeakMap<
  object,
  { name: string; image: string; hash: string }
>();

/** {@linkcode hashContainer} formatted as the annotation value (lower-case hex). */
export function containerHashString(
  container: Pick<Container, "name" | "image">,
): string {
  const image = container.image ?? "";
  const cached = CACHE.get(container);
  if (cached && cached.name === container.name && cached.image === image) {
    return cached.hash;
  }
  const hash = hashContainer(container).toString(16);
  CACHE.set(container, { name: container.name, image, hash });
  return hash;
}
