/**
 * Go `strconv` parsing and `%q` quoting, with Go's exact error texts, for the
 * kubelet's command-line values (`invalid argument "x" for "--port" flag: ...`).
 * @module
 */

/** Quotes like Go's `strconv.Quote` / `%q` for the characters flags meet. */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case "\\":
        out += "\\\\";
        continue;
      case "\x07":
        out += "\\a";
        continue;
      case "\b":
        out += "\\b";
        continue;
      case "\f":
        out += "\\f";
        continue;
      case "\n":
        out += "\\n";
        continue;
      case "\r":
        out += "\\r";
        continue;
      case "\t":
        out += "\\t";
        continue;
      case "\v":
        out += "\\v";
        continue;
    }
    if (code < 0x20 || code === 0x7f) {
      out += "\\x" + code.toString(16).padStart(2, "0");
    } else if (code >= 0x80 && code < 0xa0) {
      out += "\\u" + code.toString(16).padStart(4, "0");
    } else {
      out += ch;
    }
  }
  return out + '"';
}

/** Quotes one character like Go's `%q` of a byte or rune: `'v'`. */
export function goQuoteChar(ch: string): string {
  if (ch === "'") return "'\\''";
  const quoted = goQuote(ch);
  return "'" + quoted.slice(1, -1).replace(/\\"/g, '"') + "'";
}

/** A Go `*strconv.NumError` rendered as text. */
export class GoNumError extends RangeError {
  constructor(
    fn: string,
    detail: { input: string; reason: "invalid syntax" | "value out of range" },
  ) {
    const { input, reason } = detail;
    super(`strconv.${fn}: parsing ${goQuote(input)}: ${reason}`);
    this.name = "GoNumError";
  }
}

const TRUE_WORDS = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE_WORDS = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** `strconv.ParseBool`. */
export function parseGoBool(text: string): boolean {
  if (TRUE_WORDS.has(text)) return true;
  if (FALSE_WORDS.has(text)) return false;
  throw new GoNumError("ParseBool", { input: text, reason: "invalid syntax" });
}

const DIGITS: Record<number, RegExp> = {
  2: /^[01]+$/,
  8: /^[0-7]+$/,
  10: /^[0-9]+$/,
  16: /^[0-9a-fA-F]+$/,
};

/** Splits a base-0 literal into radix and digits; underscores must sit between digits. */
function splitBaseZero(
  body: string,
): { radix: number; digits: string } | undefined {
  let radix = 10;
  let digits = body;
  let prefixed = false;
  if (body.length > 1 && body[0] === "0") {
    const marker = body[1]?.toLowerCase();
    if (marker === "x") [radix, digits, prefixed] = [16, body.slice(2), true];
    else if (marker === "o") {
      [radix, digits, prefixed] = [8, body.slice(2), true];
    } else if (marker === "b") {
      [radix, digits, prefixed] = [2, body.slice(2), true];
    } else [radix, digits] = [8, body.slice(1)];
  }
  if (digits.includes("_")) {
    // Go allows "_" only between digits or right after a base prefix.
    const check = (prefixed || radix === 8 && body !== digits ? "0" : "") +
      digits;
    if (/(^_)|(__)|(_$)/.test(check)) return undefined;
    digits = digits.replace(/_/g, "");
  }
  if (digits === "") return undefined;
  return { radix, digits };
}

function toBigInt(digits: string, radix: number): bigint | undefined {
  const re = DIGITS[radix];
  if (re === undefined || !re.test(digits)) return undefined;
  let value = 0n;
  const big = BigInt(radix);
  for (const d of digits.toLowerCase()) {
    value = value * big + BigInt(parseInt(d, 16));
  }
  return value;
}

/**
 * `strconv.ParseInt(text, base, bits)` for base 0 or 10. Returns a number;
 * 64-bit values beyond 2^53 lose precision, which no kubelet flag reaches.
 */
export function parseGoInt(
  text: string,
  options: { base: 0 | 10; bits: number },
): number {
  const fn = "ParseInt";
  let body = text;
  let negative = false;
  if (body.startsWith("+") || body.startsWith("-")) {
    negative = body[0] === "-";
    body = body.slice(1);
  }
  const parts = options.base === 0
    ? splitBaseZero(body)
    : { radix: 10, digits: body };
  const magnitude = parts && toBigInt(parts.digits, parts.radix);
  if (magnitude === undefined || body === "") {
    throw new GoNumError(fn, { input: text, reason: "invalid syntax" });
  }
  const limit = 1n << BigInt(options.bits - 1);
  if (negative ? magnitude > limit : magnitude >= limit) {
    throw new GoNumError(fn, { input: text, reason: "value out of range" });
  }
  return Number(negative ? -magnitude : magnitude);
}

/** `strconv.ParseUint(text, base, bits)` for base 0 or 10. */
export function parseGoUint(
  text: string,
  options: { base: 0 | 10; bits: number },
): number {
  const fn = "ParseUint";
  const parts = options.base === 0
    ? splitBaseZero(text)
    : { radix: 10, digits: text };
  const magnitude = parts && toBigInt(parts.digits, parts.radix);
  if (magnitude === undefined || text === "") {
    throw new GoNumError(fn, { input: text, reason: "invalid syntax" });
  }
  if (magnitude >= 1n << BigInt(options.bits)) {
    throw new GoNumError(fn, { input: text, reason: "value out of range" });
  }
  return Number(magnitude);
}

const FLOAT_REGEXP =
  /^[+-]?(?:(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;

/** `strconv.ParseFloat(text, 64)` (decimal forms, `inf`, `nan`). */
export function parseGoFloat(text: string): number {
  if (!FLOAT_REGEXP.test(text)) {
    throw new GoNumError("ParseFloat", {
      input: text,
      reason: "invalid syntax",
    });
  }
  const lower = text.toLowerCase().replace(/_/g, "");
  const sign = lower.startsWith("-") ? -1 : 1;
  const body = lower.replace(/^[+-]/, "");
  if (body === "nan") return NaN;
  if (body.startsWith("inf")) return sign * Infinity;
  const value = Number(lower);
  if (!Number.isFinite(value)) {
    throw new GoNumError("ParseFloat", {
      input: text,
      reason: "value out of range",
    });
  }
  return value;
}
