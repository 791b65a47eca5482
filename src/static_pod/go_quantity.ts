/**
 * `resource.Quantity` as the Go struct it is after `ParseQuantity` (apimachinery
 * `pkg/api/resource`): an int64 mantissa and scale, or an arbitrary-precision decimal, the
 * cached text and the format. The static pod UID hashes this struct (spew prints its private
 * fields), so the split between the two forms and the cached text must follow upstream exactly.
 * The rest of the kubelet reads quantities as numbers (`src/util/quantity.ts`), which cannot
 * hold this struct; hence two parsers, one per need.
 *
 * @module
 */

/** Upstream's `ErrFormatWrong` text. */
export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/** Upstream's `ErrNumeric` text. */
export const QUANTITY_NUMERIC_ERROR =
  "unable to parse quantity's numeric value";
/** Upstream's `ErrSuffix` text. */
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

/** `Format` of a quantity. */
export type GoQuantityFormat = "DecimalSI" | "BinarySI" | "DecimalExponent";

/** The fields of a parsed `resource.Quantity`. */
export interface GoQuantity {
  /** `i` (int64Amount): used when `dec` is undefined. */
  value: bigint;
  scale: number;
  /** `d` (infDecAmount): the unscaled integer and inf scale (value = unscaled × 10^-scale). */
  dec?: { unscaled: bigint; scale: number };
  /** `s`: the cached text, "" when not cached. */
  s: string;
  /** "" for a zero `Quantity{}`. */
  format: GoQuantityFormat | "";
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const DECIMAL_SUFFIXES: Record<string, number> = {
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
const BINARY_SUFFIXES: Record<string, number> = {
  Ki: 10,
  Mi: 20,
  Gi: 30,
  Ti: 40,
  Pi: 50,
  Ei: 60,
};

/** Thrown with upstream's error texts. */
export class GoQuantityError extends Error {}

const isDigit = (c: string | undefined) =>
  c !== undefined && c >= "0" && c <= "9";

interface Parts {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

/** Upstream `parseQuantityString`. */
function splitQuantity(str: string): Parts {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === "-") {
    positive = false;
    pos++;
  } else if (str[0] === "+") pos++;
  while (true) {
    if (pos >= end) {
      return { positive, value: "0", num: "0", denom: "", suffix: "" };
    }
    if (str[pos] !== "0") break;
    pos++;
  }
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) {
    return {
      positive,
      value: str,
      num: str.slice(pos),
      denom: "",
      suffix: "",
    };
  }
  let num = str.slice(pos, i);
  pos = i;
  if (num === "") num = "0";
  let denom = "";
  if (str[pos] === ".") {
    pos++;
    let j = pos;
    while (j < end && isDigit(str[j])) j++;
    denom = str.slice(pos, j);
    if (j >= end) return { positive, value: str, num, denom, suffix: "" };
    pos = j;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  let k = pos;
  while (k < end && "eEinumkKMGTP".includes(str[k]!)) k++;
  if (k >= end) {
    return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  }
  pos = k;
  if (str[pos] === "-" || str[pos] === "+") pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos >= end) {
    return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  }
  throw new GoQuantityError(QUANTITY_FORMAT_ERROR);
}

function interpretSuffix(
  suffix: string,
): { base: number; exponent: number; format: GoQuantityFormat } {
  if (suffix in DECIMAL_SUFFIXES) {
    return {
      base: 10,
      exponent: DECIMAL_SUFFIXES[suffix]!,
      format: "DecimalSI",
    };
  }
  if (suffix in BINARY_SUFFIXES) {
    return { base: 2, exponent: BINARY_SUFFIXES[suffix]!, format: "BinarySI" };
  }
  if (suffix.length > 1 && (suffix[0] === "E" || suffix[0] === "e")) {
    const digits = suffix.slice(1);
    if (/^[+-]?[0-9]+$/.test(digits)) {
      const parsed = BigInt(digits);
      if (parsed <= INT64_MAX && parsed >= INT64_MIN) {
        return {
          base: 10,
          exponent: Number(BigInt.asIntN(32, parsed)),
          format: "DecimalExponent",
        };
      }
    }
  }
  throw new GoQuantityError(QUANTITY_SUFFIX_ERROR);
}

/** Divides rounding away from zero (inf.RoundUp) when inexact. */
function divRoundUp(n: bigint, d: bigint): bigint {
  const q = n / d;
  if (q * d === n) return q;
  return n < 0n ? q - 1n : q + 1n;
}

/** The decimal `unscaled × 10^-scale` rescaled to `target` rounding away from zero. */
function rescaleUp(
  dec: { unscaled: bigint; scale: number },
  target: number,
): { unscaled: bigint; scale: number } {
  if (target >= dec.scale) {
    return {
      unscaled: dec.unscaled * 10n ** BigInt(target - dec.scale),
      scale: target,
    };
  }
  return {
    unscaled: divRoundUp(dec.unscaled, 10n ** BigInt(dec.scale - target)),
    scale: target,
  };
}

/** Upstream `ParseQuantity` (after the JSON decoder trimmed the text). */
export function parseGoQuantity(str: string): GoQuantity {
  if (str.length === 0) throw new GoQuantityError(QUANTITY_FORMAT_ERROR);
  if (str === "0") return { value: 0n, scale: 0, s: str, format: "DecimalSI" };
  const { positive, value, num, denom, suffix } = splitQuantity(str);
  const { base, exponent, format: parsedFormat } = interpretSuffix(suffix);
  let format = parsedFormat;
  let precision = 0;
  let scale = 0;
  let mantissa = 1n;
  if (format === "BinarySI") {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc(Math.fround(exponent * 3 / 10)) -
        1;
    } else precision = -1;
  } else {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= -9) {
      const shifted = num + denom;
      const parsed = BigInt(shifted);
      if (parsed > INT64_MAX) throw new GoQuantityError(QUANTITY_NUMERIC_ERROR);
      let result = parsed * mantissa;
      if (result <= INT64_MAX && result >= INT64_MIN) {
        if (!positive) result = -result;
        const cached = format === "BinarySI"
          ? exponent % 10 === 0 && (parsed & 7n) !== 0n
          : scale % 3 === 0 && !shifted.endsWith("000") && shifted[0] !== "0";
        return { value: result, scale, s: cached ? str : "", format };
      }
    }
  }
  // inf.Dec path: the digits of `value` (sign included) as an unscaled integer and scale.
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/.exec(value);
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) {
    throw new GoQuantityError(QUANTITY_NUMERIC_ERROR);
  }
  const frac = m[3] ?? "";
  let dec = {
    unscaled: BigInt(`${m[1] === "-" ? "-" : ""}${m[2] || "0"}${frac}`),
    scale: frac.length,
  };
  if (base === 10) dec.scale -= exponent;
  else if (base === 2) dec.unscaled *= 1n << BigInt(exponent);
  const negative = dec.unscaled < 0n;
  if (negative) dec.unscaled = -dec.unscaled;
  const fitsInt64 = dec.unscaled <= INT64_MAX;
  if (dec.unscaled !== 0n || !fitsInt64) dec = rescaleUp(dec, 9);
  if (
    format === "BinarySI" &&
    compareDec(dec, { unscaled: INT64_MAX, scale: 0 }) > 0
  ) {
    dec = { unscaled: INT64_MAX, scale: 0 };
  }
  if (
    format === "BinarySI" && compareDec(dec, { unscaled: 1n, scale: 0 }) < 0 &&
    dec.unscaled > 0n
  ) {
    format = "DecimalSI";
  }
  if (negative) dec.unscaled = -dec.unscaled;
  return { value: 0n, scale: 0, dec, s: "", format };
}

function compareDec(
  a: { unscaled: bigint; scale: number },
  b: { unscaled: bigint; scale: number },
): number {
  const s = Math.max(a.scale, b.scale);
  const x = a.unscaled * 10n ** BigInt(s - a.scale);
  const y = b.unscaled * 10n ** BigInt(s - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Upstream `Quantity.RoundUp(scale)` (scale in Go `Scale` units, e.g. -3 for milli). */
export function roundUpGoQuantity(q: GoQuantity, scale: number): GoQuantity {
  if (q.dec) {
    return { ...q, s: "", dec: rescaleUp(q.dec, -scale) };
  }
  if (q.scale >= scale) return q;
  return { ...q, s: "", value: negativeScale(q.value, scale - q.scale), scale };
}

/** Upstream `negativeScaleInt64`: divides by 10^by, rounding away from zero. */
function negativeScale(base: bigint, by: number): bigint {
  let value = base;
  let fraction = false;
  for (let i = 0; i < by; i++) {
    if (!fraction && value % 10n !== 0n) fraction = true;
    value = value / 10n;
    if (value === 0n) {
      if (fraction) return base > 0n ? 1n : -1n;
      return 0n;
    }
  }
  if (fraction) value += base > 0n ? 1n : -1n;
  return value;
}

const DECIMAL_SUFFIX_BY_EXPONENT = new Map(
  Object.entries(DECIMAL_SUFFIXES).map(([k, v]) => [v, k]),
);
const BINARY_SUFFIX_BY_EXPONENT = new Map(
  Object.entries(BINARY_SUFFIXES).map(([k, v]) => [v, k]),
);

/** The mantissa and power of ten of `q` (value = mantissa × 10^exponent). */
function mantissaOf(q: GoQuantity): { mantissa: bigint; exponent: number } {
  return q.dec
    ? { mantissa: q.dec.unscaled, exponent: -q.dec.scale }
    : { mantissa: q.value, exponent: q.scale };
}

/** Upstream `Quantity.String()`: the cached text, else the canonical form. */
export function goQuantityString(q: GoQuantity): string {
  if (q.s) return q.s;
  const { mantissa, exponent } = mantissaOf(q);
  if (mantissa === 0n) return "0";
  let format = q.format;
  let whole = 0n;
  if (format === "BinarySI") {
    const asInt = exponent >= 0
      ? { v: mantissa * 10n ** BigInt(exponent), exact: true }
      : (() => {
        const d = 10n ** BigInt(-exponent);
        return { v: divRoundUp(mantissa, d), exact: mantissa % d === 0n };
      })();
    const small = compareDec(
          { unscaled: mantissa, scale: -exponent },
          { unscaled: -1024n, scale: 0 },
        ) > 0 &&
      compareDec({ unscaled: mantissa, scale: -exponent }, {
          unscaled: 1024n,
          scale: 0,
        }) < 0;
    if (small || !asInt.exact) format = "DecimalSI";
    whole = asInt.v;
  }
  if (format === "BinarySI") {
    let amount = whole;
    let times = 0;
    while (amount !== 0n && amount % 1024n === 0n) {
      amount /= 1024n;
      times++;
    }
    const suffix = BINARY_SUFFIX_BY_EXPONENT.get(times * 10) ?? "";
    return `${amount}${suffix}`;
  }
  let amount = mantissa;
  let exp = exponent;
  while (amount !== 0n && amount % 10n === 0n) {
    amount /= 10n;
    exp++;
  }
  while (exp % 3 !== 0) {
    amount *= 10n;
    exp--;
  }
  if (format === "DecimalSI") {
    const suffix = DECIMAL_SUFFIX_BY_EXPONENT.get(exp);
    if (suffix !== undefined) return `${amount}${suffix}`;
  }
  return exp === 0 ? `${amount}` : `${amount}e${exp}`;
}

/** A decoded quantity: the Go struct, serialized as upstream's JSON text. */
export class DecodedQuantity {
  constructor(readonly q: GoQuantity) {}
  toJSON(): string {
    return goQuantityString(this.q);
  }
}
