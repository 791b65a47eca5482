/**
 * Exact integer views of a resource quantity (`250m`, `1.5`, `128Mi`, `1e3`), as the kubelet
 * reads them from `resource.Quantity`: `MilliValue()` for CPU and `Value()` for bytes, both
 * rounded up. Computed with bigints, so `0.1` CPU is 100 millicores, not 100.000…01.
 *
 * @module
 */

const QUANTITY_REGEXP =
  /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const BINARY_POWER: Record<string, number> = {
  Ki: 1,
  Mi: 2,
  Gi: 3,
  Ti: 4,
  Pi: 5,
  Ei: 6,
};
const DECIMAL_EXPONENT: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** A quantity as `numerator / 10^shift` (shift ≥ 0) in base units. */
interface Exact {
  numerator: bigint;
  shift: number;
}

function exact(value: string | number): Exact {
  const text = typeof value === "number" ? String(value) : value.trim();
  const m = QUANTITY_REGEXP.exec(text);
  const whole = m?.[2] ?? "";
  const fraction = m?.[3] ?? "";
  if (!m || whole + fraction === "") {
    throw new RangeError(
      `Invalid quantity "${value}": use a number with an optional suffix such as 100m, 2, 128Mi or 1G`,
    );
  }
  const suffix = m[4] ?? "";
  let numerator = BigInt(whole + fraction || "0");
  let exponent = -fraction.length;
  const binary = BINARY_POWER[suffix];
  if (binary !== undefined) numerator *= 1024n ** BigInt(binary);
  else if (/^[eE]/.test(suffix)) exponent += Number(suffix.slice(1));
  else if (suffix) exponent += DECIMAL_EXPONENT[suffix]!;
  if (m[1] === "-") numerator = -numerator;
  if (exponent >= 0) {
    return { numerator: numerator * 10n ** BigInt(exponent), shift: 0 };
  }
  return { numerator, shift: -exponent };
}

function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a > 0n ? q + 1n : q;
}

function scaled(value: string | number, exponent: number): bigint {
  const e = exact(value);
  const shift = e.shift - exponent;
  return shift <= 0
    ? e.numerator * 10n ** BigInt(-shift)
    : ceilDiv(e.numerator, 10n ** BigInt(shift));
}

/** `Quantity.MilliValue()`: thousandths of the base unit, rounded up. */
export function milliValue(value: string | number): number {
  return Number(scaled(value, 3));
}

/** `Quantity.Value()`: whole base units (bytes), rounded up. */
export function quantityValue(value: string | number): number {
  return Number(scaled(value, 0));
}
