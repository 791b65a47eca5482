/**
 * Go `time.Duration` text form, as the kubelet's flags and config file use it.
 *
 * Values are carried as milliseconds (a float, so sub-millisecond parts
 * survive a round trip); the text form is computed from whole nanoseconds.
 * @module
 */

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  "µs": 1_000n, // U+00B5 micro sign
  "μs": 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_NANOS = 9_223_372_036_854_775_807n;

function quote(s: string): string {
  return JSON.stringify(s);
}

/**
 * Parses a Go duration such as `1m30s`, `100ms` or `-1.5h` into milliseconds.
 * Throws a RangeError worded like Go's `time.ParseDuration`.
 */
export function parseGoDuration(text: string): number {
  const invalid = () => new RangeError(`time: invalid duration ${quote(text)}`);
  let s = text;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw invalid();
  let total = 0n;
  while (s !== "") {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s);
    const whole = num?.[1] ?? "";
    const frac = num?.[2];
    if (whole === "" && (frac === undefined || frac === "")) throw invalid();
    s = s.slice(num?.[0].length ?? 0);
    const unitMatch = /^[^\d.]+/.exec(s);
    if (!unitMatch) {
      throw new RangeError(`time: missing unit in duration ${quote(text)}`);
    }
    const unitName = unitMatch[0];
    const unit = UNIT_NANOS[unitName];
    if (unit === undefined) {
      throw new RangeError(
        `time: unknown unit ${quote(unitName)} in duration ${quote(text)}`,
      );
    }
    s = s.slice(unitName.length);
    let value = BigInt(whole === "" ? "0" : whole) * unit;
    if (frac) {
      const scale = 10n ** BigInt(frac.length);
      value += (BigInt(frac) * unit) / scale;
    }
    total += value;
    if (total > MAX_NANOS) throw invalid();
  }
  const ms = Number(total) / 1e6;
  return negative ? -ms : ms;
}

function trimFraction(digits: string): string {
  return digits.replace(/0+$/, "");
}

function withFraction(whole: bigint, rest: bigint, width: number): string {
  if (rest === 0n) return whole.toString();
  const frac = trimFraction(rest.toString().padStart(width, "0"));
  return `${whole}.${frac}`;
}

/** Formats milliseconds the way Go's `time.Duration.String()` does (`1m0s`, `100ms`, `0s`). */
export function formatGoDuration(ms: number): string {
  let ns = BigInt(Math.round(ms * 1e6));
  const sign = ns < 0n ? "-" : "";
  if (ns < 0n) ns = -ns;
  if (ns === 0n) return "0s";
  if (ns < 1_000n) return `${sign}${ns}ns`;
  if (ns < 1_000_000n) {
    return `${sign}${withFraction(ns / 1_000n, ns % 1_000n, 3)}µs`;
  }
  if (ns < 1_000_000_000n) {
    return `${sign}${withFraction(ns / 1_000_000n, ns % 1_000_000n, 6)}ms`;
  }
  const hours = ns / UNIT_NANOS.h!;
  ns %= UNIT_NANOS.h!;
  const minutes = ns / UNIT_NANOS.m!;
  ns %= UNIT_NANOS.m!;
  const seconds = withFraction(ns / 1_000_000_000n, ns % 1_000_000_000n, 9);
  if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
