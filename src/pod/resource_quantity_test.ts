import assert from "node:assert/strict";
import { milliValue, quantityValue } from "./resource_quantity.ts";

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
