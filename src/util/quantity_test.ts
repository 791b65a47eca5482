import assert from "node:assert/strict";
import {
  compareQuantities,
  isQuantity,
  milliValue,
  parseQuantity,
  QUANTITY_REGEXP_TEXT,
  QuantityError,
  quantityValue,
} from "./quantity.ts";

Deno.test("parseQuantity() reads binary, decimal and exponent suffixes", () => {
  const cases: Array<[string, number, string]> = [
    ["0", 0, "DecimalSI"],
    ["100Mi", 100 * 1024 * 1024, "BinarySI"],
    ["1Ki", 1024, "BinarySI"],
    ["2Gi", 2 * 1024 ** 3, "BinarySI"],
    ["250m", 0.25, "DecimalSI"],
    ["1.5k", 1500, "DecimalSI"],
    ["3M", 3e6, "DecimalSI"],
    ["1e3", 1000, "DecimalExponent"],
    ["5E-1", 0.5, "DecimalExponent"],
    ["-2", -2, "DecimalSI"],
    ["+7", 7, "DecimalSI"],
    [".5", 0.5, "DecimalSI"],
    ["128", 128, "DecimalSI"],
  ];
  for (const [text, value, format] of cases) {
    const q = parseQuantity(text);
    assert.ok(Math.abs(q.value - value) < 1e-9, `${text}: ${q.value}`);
    assert.equal(q.format, format, text);
  }
});

Deno.test("parseQuantity() rejects malformed text with upstream messages", () => {
  for (const bad of ["", "abc", "1.2.3", "Mi", "10%", "1 Mi x", "."]) {
    assert.throws(() => parseQuantity(bad), (err: unknown) => {
      assert.ok(err instanceof QuantityError, bad);
      assert.equal(
        err.message,
        `quantities must match the regular expression '${QUANTITY_REGEXP_TEXT}'`,
      );
      return true;
    });
  }
  assert.throws(
    () => parseQuantity("10MM"),
    /unable to parse quantity's suffix/,
  );
  assert.throws(
    () => parseQuantity("1Kim"),
    /unable to parse quantity's suffix/,
  );
});

Deno.test("compareQuantities() orders across suffix families", () => {
  assert.equal(compareQuantities(parseQuantity("1Ki"), parseQuantity("1k")), 1);
  assert.equal(
    compareQuantities(parseQuantity("1000m"), parseQuantity("1")),
    0,
  );
  assert.equal(
    compareQuantities(parseQuantity("1M"), parseQuantity("1Mi")),
    -1,
  );
  assert.equal(isQuantity("10Mi"), true);
  assert.equal(isQuantity("ten"), false);
});

Deno.test("milliValue() reads quantities exactly and rounds up", () => {
  const cases: [string | number, number][] = [
    ["100m", 100],
    ["0.1", 100],
    ["1.5", 1500],
    [2, 2000],
    ["1k", 1_000_000],
    ["1e-3", 1],
    ["1u", 1],
    ["0", 0],
    [".5", 500],
  ];
  for (const [q, want] of cases) assert.equal(milliValue(q), want, String(q));
});

Deno.test("quantityValue() reads bytes exactly and rounds up", () => {
  const cases: [string, number][] = [
    ["128Mi", 134_217_728],
    ["1Gi", 1_073_741_824],
    ["1G", 1e9],
    ["1.5Ki", 1536],
    ["100m", 1],
    ["2e3", 2000],
  ];
  for (const [q, want] of cases) assert.equal(quantityValue(q), want, q);
});

Deno.test("milliValue() rejects text that is no quantity", () => {
  for (const bad of ["", "12 apples", "1.2.3", "Mi", "1Kx"]) {
    assert.throws(() => milliValue(bad), RangeError, bad);
  }
});
