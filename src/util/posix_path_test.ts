import assert from "node:assert/strict";
import { posix } from "node:path";
import { dirname, isAbsolute, join, normalize, resolve } from "./posix_path.ts";

const PARTS = [
  "",
  "/",
  "//",
  ".",
  "..",
  "a",
  "b.c",
  "..a",
  "a.",
  "x y",
  "/etc",
  "var/",
  "../..",
  "./d",
];

/** A small deterministic PRNG (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("posix_path agrees with node:path posix on 5000 generated paths", () => {
  const rand = seeded(7);
  const path = () =>
    Array.from(
      { length: Math.floor(rand() * 5) },
      () => PARTS[Math.floor(rand() * PARTS.length)],
    ).join(rand() < 0.8 ? "/" : "");
  for (let i = 0; i < 5000; i++) {
    const a = path();
    const b = path();
    assert.equal(normalize(a), posix.normalize(a), `normalize(${a})`);
    assert.equal(dirname(a), posix.dirname(a), `dirname(${a})`);
    assert.equal(isAbsolute(a), posix.isAbsolute(a), `isAbsolute(${a})`);
    assert.equal(join(a, b), posix.join(a, b), `join(${a}, ${b})`);
    assert.equal(resolve(a, b), posix.resolve(a, b), `resolve(${a}, ${b})`);
  }
});
