import assert from "node:assert/strict";
import { posix } from "node:path";
import { dirname, isAbsolute, join, normalize, resolve } from "./posix_path.ts";
import { seededRandom } from "./seeded_random.ts";

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

Deno.test("posix_path agrees with node:path posix on 5000 generated paths", () => {
  const rand = seededRandom(7);
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
