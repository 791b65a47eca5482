import assert from "node:assert/strict";
import {
  derDirectoryString,
  derLength,
  derOid,
  derSmallInteger,
  derUnsignedInteger,
  toPem,
} from "./der.ts";

const hex = (b: Uint8Array) =>
  [...b].map((x) => x.toString(16).padStart(2, "0")).join(" ");

Deno.test("derLength() uses the short form below 128 and the fewest long-form bytes", () => {
  assert.equal(hex(derLength(0)), "00");
  assert.equal(hex(derLength(127)), "7f");
  assert.equal(hex(derLength(128)), "81 80");
  assert.equal(hex(derLength(255)), "81 ff");
  assert.equal(hex(derLength(256)), "82 01 00");
  assert.equal(hex(derLength(70000)), "83 01 11 70");
});

Deno.test("derOid() encodes the first two arcs together and base-128 continuation", () => {
  assert.equal(hex(derOid("2.5.4.3")), "06 03 55 04 03");
  assert.equal(hex(derOid("2.5.4.10")), "06 03 55 04 0a");
  assert.equal(
    hex(derOid("1.2.840.10045.4.3.2")),
    "06 08 2a 86 48 ce 3d 04 03 02",
  );
  assert.throws(() => derOid("5.1"), RangeError);
  assert.throws(() => derOid("1.x"), RangeError);
});

Deno.test("derUnsignedInteger() is minimal and stays positive", () => {
  assert.equal(hex(derUnsignedInteger(Uint8Array.of(0, 0, 1))), "02 01 01");
  assert.equal(hex(derUnsignedInteger(Uint8Array.of(0x80))), "02 02 00 80");
  assert.equal(hex(derUnsignedInteger(Uint8Array.of(0, 0))), "02 01 00");
  assert.equal(hex(derSmallInteger(0)), "02 01 00");
  assert.equal(hex(derSmallInteger(300)), "02 02 01 2c");
});

Deno.test("derDirectoryString() picks PrintableString as Go does, else UTF8String", () => {
  assert.equal(derDirectoryString("system:nodes")[0], 0x13);
  assert.equal(derDirectoryString("a_b")[0], 0x0c);
  assert.equal(derDirectoryString("é")[0], 0x0c);
});

Deno.test("toPem() wraps base64 at 64 columns", () => {
  const pem = toPem("X", new Uint8Array(100));
  const lines = pem.trimEnd().split("\n");
  assert.equal(lines[0], "-----BEGIN X-----");
  assert.equal(lines[1]!.length, 64);
  assert.equal(lines.at(-1), "-----END X-----");
});
