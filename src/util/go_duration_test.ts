import assert from "node:assert/strict";
import { formatGoDuration, parseGoDuration } from "./go_duration.ts";

Deno.test("parseGoDuration() reads Go duration text", () => {
  const cases: [string, number][] = [
    ["0", 0],
    ["1s", 1000],
    ["1m0s", 60_000],
    ["1h30m", 5_400_000],
    ["100ms", 100],
    ["1.5s", 1500],
    ["-2m", -120_000],
    ["+3s", 3000],
    ["500us", 0.5],
    ["2µs", 0.002],
    [".5s", 500],
    ["1h2m3s4ms", 3_723_004],
  ];
  for (const [text, ms] of cases) {
    assert.equal(parseGoDuration(text), ms, text);
  }
});

Deno.test("parseGoDuration() rejects bad text with Go's wording", () => {
  assert.throws(() => parseGoDuration(""), {
    message: 'time: invalid duration ""',
  });
  assert.throws(() => parseGoDuration("abc"), {
    message: 'time: invalid duration "abc"',
  });
  assert.throws(() => parseGoDuration("10"), {
    message: 'time: missing unit in duration "10"',
  });
  assert.throws(() => parseGoDuration("10x"), {
    message: 'time: unknown unit "x" in duration "10x"',
  });
  assert.throws(() => parseGoDuration("."), RangeError);
});

Deno.test("formatGoDuration() matches time.Duration.String()", () => {
  const cases: [number, string][] = [
    [0, "0s"],
    [1000, "1s"],
    [60_000, "1m0s"],
    [120_000, "2m0s"],
    [3_600_000, "1h0m0s"],
    [100, "100ms"],
    [1500, "1.5s"],
    [0.5, "500µs"],
    [0.000001, "1ns"],
    [-90_000, "-1m30s"],
    [14_400_000, "4h0m0s"],
    [20_000, "20s"],
  ];
  for (const [ms, text] of cases) {
    assert.equal(formatGoDuration(ms), text, String(ms));
  }
});

Deno.test("formatGoDuration() round-trips through parseGoDuration()", () => {
  for (const text of ["1m30s", "2h5m0s", "250ms", "4h0m0s", "1.25s"]) {
    assert.equal(formatGoDuration(parseGoDuration(text)), text);
  }
});
