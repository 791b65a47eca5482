/**
 * Kubernetes `resource.Quantity` text form: `<number><suffix>` where the
 * suffix is a binary SI unit (`Ki`…`Ei`), a decimal SI unit (`n`, `u`, `m`,
 * ``, `k`, `M`, `G`, `T`, `P`, `E`) or a decimal exponent (`e3`, `E-2`).
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
