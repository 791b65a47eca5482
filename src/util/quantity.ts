/**
 * Kubernetes `resource.Quantity` text form: `<number><suffix>` where the
 * suffix is a binary SI unit (`Ki`…`Ei`), a decimal SI unit (`n`, `u`, `m`,
 * ``, `k`, `M`, `G`, `T`, `P`, `E`) or a decimal exponent (`e3`, `E-2`).
 *
 * This is the kubelet's working view of a quantity: a JavaScript number of base units for
 * cgroup limits, eviction thresholds and flags, where a double is exact enough. The static pod
 * reader keeps its own parser (`src/static_pod/go_quantity.ts`) because it must rebuild Go's
 * internal struct bit for bit (int64 mantissa or big decimal, cached text, format) for the
 * UID hash and upstream's error texts, which a number cannot carry.
 * @module
 */

/** The regular expression upstream quotes in its format error. */
export const QUANTITY_REGEXP_TEXT =
  "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
const QUANTITY_REGEXP = new RegExp(QUANTITY_REGEXP_TEXT);

/** Which family of suffix a quantity was written with. */
export type QuantityFormat = "BinarySI" | "DecimalSI" | "DecimalExponent";

/** A parsed quantity; `value` is in base units (bytes, cores, …). */
export interface Quantity {
  readonly value: number;
  readonly format: QuantityFormat;
  readonly text: string;
}

/** Thrown for text that is not a valid quantity (upstream wording). */
export class QuantityError extends RangeError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "QuantityError";
  }
}

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const DECIMAL: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

const FORMAT_ERROR =
  `quantities must match the regular expression '${QUANTITY_REGEXP_TEXT}'`;
const SUFFIX_ERROR = "unable to parse quantity's suffix";

function scaleFromSuffix(
  suffix: string,
): { factor: number; format: QuantityFormat } {
  const binary = BINARY[suffix];
  if (binary !== undefined) return { factor: binary, format: "BinarySI" };
  const decimal = DECIMAL[suffix];
  if (decimal !== undefined) {
    return { factor: 10 ** decimal, format: "DecimalSI" };
  }
  const exponent = /^[eE]([+-]?\d+)$/.exec(suffix);
  if (exponent?.[1] !== undefined) {
    return { factor: 10 ** Number(exponent[1]), format: "DecimalExponent" };
  }
  throw new QuantityError(SUFFIX_ERROR);
}

/**
 * Parses a quantity such as `100Mi`, `1.5G`, `250m` or `1e3`.
 * Throws QuantityError with upstream's texts on bad input.
 */
export function parseQuantity(text: string): Quantity {
  const trimmed = text;
  if (trimmed === "") throw new QuantityError(FORMAT_ERROR);
  const match = QUANTITY_REGEXP.exec(trimmed);
  const numberPart = match?.[1];
  const suffixPart = match?.[2] ?? "";
  if (numberPart === undefined) throw new QuantityError(FORMAT_ERROR);
  // The number may hold at most one dot and at least one digit.
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(numberPart)) {
    throw new QuantityError(FORMAT_ERROR);
  }
  const { factor, format } = scaleFromSuffix(suffixPart);
  const value = Number(numberPart) * factor;
  return { value: Object.is(value, -0) ? 0 : value, format, text: trimmed };
}

/** True when `text` parses as a quantity. */
export function isQuantity(text: string): boolean {
  try {
    parseQuantity(text);
    return true;
  } catch {
    return false;
  }
}

/** Compares two quantities: negative, zero or positive like a sort callback. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  return a.value === b.value ? 0 : a.value < b.value ? -1 : 1;
}

/** A quantity as `numerator / 10^shift` (shift ≥ 0) in base units, without rounding. */
function exactQuantity(value: string | number): {
  numerator: bigint;
  shift: number;
} {
  const text = String(value);
  parseQuantity(text); // rejects bad text with upstream's wording
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/.exec(text)!;
  const fraction = m[3] ?? "";
  const suffix = m[4] ?? "";
  let numerator = BigInt((m[2] ?? "") + fraction || "0");
  let exponent = -fraction.length;
  const binary = BINARY[suffix];
  if (binary !== undefined) numerator *= BigInt(binary);
  else if (/^[eE]/.test(suffix)) exponent += Number(suffix.slice(1));
  else exponent += DECIMAL[suffix] ?? 0;
  if (m[1] === "-") numerator = -numerator;
  return exponent >= 0
    ? { numerator: numerator * 10n ** BigInt(exponent), shift: 0 }
    : { numerator, shift: -exponent };
}

/** `value` × 10^digits as a whole number, rounded up as resource.Quantity does. */
function scaledValue(value: string | number, digits: number): number {
  const { numerator, shift } = exactQuantity(value);
  const down = shift - digits;
  if (down <= 0) return Number(numerator * 10n ** BigInt(-down));
  const divisor = 10n ** BigInt(down);
  const q = numerator / divisor;
  return Number(numerator % divisor !== 0n && numerator > 0n ? q + 1n : q);
}

/**
 * Upstream `Quantity.MilliValue()`: thousandths of the base unit (millicores), exact and
 * rounded up, so `0.1` is 100.
 */
export function milliValue(value: string | number): number {
  return scaledValue(value, 3);
}

/** Upstream `Quantity.Value()`: whole base units (bytes), exact and rounded up. */
export function quantityValue(value: string | number): number {
  return scaledValue(value, 0);
}
