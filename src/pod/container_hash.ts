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

import type { Container } from "./types.ts";

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

/** Hash of the fields of `container` whose change requires a restart, as a number. */
export function hashContainer(
  container: Pick<Container, "name" | "image">,
): number {
  const json = `{"image":${goJsonString(container.image ?? "")},"name":${
    goJsonString(container.name)
  }}`;
  const jsonBytes = new TextEncoder().encode(json);
  const dump = `([]uint8)[${jsonBytes.join(" ")}]`;
  return fnv32a(new TextEncoder().encode(dump));
}

/** {@linkcode hashContainer} formatted as the annotation value (lower-case hex). */
export function containerHashString(
  container: Pick<Container, "name" | "image">,
): string {
  return hashContainer(container).toString(16);
}
