/**
 * A parsed quantity as the Go value spew prints (`resource.Quantity{i, d, s, Format}`), for the
 * static pod hash.
 *
 * @module
 */

import type { GoQuantity } from "./go_quantity.ts";

/** The Go tree of `q` (see `spew_print.ts`). */
export function quantityForHash(q: GoQuantity): Record<string, unknown> {
  return {
    i: { value: q.dec ? 0n : q.value, scale: q.dec ? 0 : q.scale },
    d: { Dec: q.dec ? decForHash(q.dec) : null },
    s: q.s,
    Format: q.format,
  };
}

/** inf.Dec{unscaled big.Int{neg, abs nat}, scale}: nat is little-endian 64-bit words. */
function decForHash(dec: { unscaled: bigint; scale: number }) {
  const neg = dec.unscaled < 0n;
  let abs = neg ? -dec.unscaled : dec.unscaled;
  const words: bigint[] = [];
  while (abs > 0n) {
    words.push(abs & 0xffffffffffffffffn);
    abs >>= 64n;
  }
  return { unscaled: { neg, abs: words }, scale: dec.scale };
}
