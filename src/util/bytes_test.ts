import assert from "node:assert/strict";
import { concatBytes } from "./bytes.ts";

Deno.test("concatBytes() joins the parts in order into a new array", () => {
  const a = Uint8Array.of(1, 2);
  const joined = concatBytes([a, new Uint8Array(), Uint8Array.of(3)]);
  assert.deepEqual([...joined], [1, 2, 3]);
  joined[0] = 9;
  assert.equal(a[0], 1, "a copy, not a view");
  assert.equal(concatBytes([]).length, 0);
});
