/**
 * Byte array helpers shared by the encoders and protocol readers.
 * @module
 */

/** The parts joined into one new array. */
export function concatBytes(
  parts: readonly Uint8Array[],
): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
