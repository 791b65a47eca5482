import assert from "node:assert/strict";
import {
  goQuote,
  goQuoteChar,
  parseGoFloat,
  parseGoInt,
  parseGoUint,
} from "./go_strconv.ts";

Deno.test("goQuote() escapes like Go's %q", () => {
  assert.equal(goQuote('a"b\\c\n\t'), '"a\\"b\\\\c\\n\\t"');
  assert.equal(goQuote("\x01\x7f"), '"\\x01\\x7f"');
  assert.equal(goQuote("héllo"), '"héllo"');
  assert.equal(goQuoteChar("v"), "'v'");
  assert.equal(goQuoteChar("'"), "'\\''");
});

Deno.test("parseGoInt() handles bases, signs, underscores and bit sizes", () => {
  assert.equal(parseGoInt("-0x7f", { base: 0, bits: 8 }), -127);
  assert.equal(parseGoInt("-128", { base: 0, bits: 8 }), -128);
  assert.throws(
    () => parseGoInt("128", { base: 0, bits: 8 }),
    /value out of range/,
  );
  assert.throws(
    () => parseGoInt("1__0", { base: 0, bits: 32 }),
    /invalid syntax/,
  );
  assert.throws(
    () => parseGoInt("_1", { base: 0, bits: 32 }),
    /invalid syntax/,
  );
  assert.throws(
    () => parseGoInt("0x", { base: 0, bits: 32 }),
    /invalid syntax/,
  );
  assert.throws(
    () => parseGoInt("09", { base: 0, bits: 32 }),
    /invalid syntax/,
  );
  assert.equal(parseGoInt("09", { base: 10, bits: 32 }), 9);
  assert.throws(
    () => parseGoInt("1_0", { base: 10, bits: 32 }),
    /invalid syntax/,
  );
});

Deno.test("parseGoUint() and parseGoFloat() follow strconv", () => {
  assert.equal(parseGoUint("2147483647", { base: 10, bits: 31 }), 2147483647);
  assert.throws(
    () => parseGoUint("+1", { base: 10, bits: 31 }),
    /invalid syntax/,
  );
  assert.equal(parseGoFloat("1e3"), 1000);
  assert.equal(parseGoFloat("-Inf"), -Infinity);
  assert.throws(() => parseGoFloat("1e999"), /value out of range/);
});
