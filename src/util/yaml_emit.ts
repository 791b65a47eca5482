/**
 * A fast writer for plain data as block YAML, producing the same text as
 * the `yaml` package's `stringify(value, { indentSeq: false, version:
 * "1.1", lineWidth: 0 })` for the values it accepts, quoting every string
 * that go-yaml v2 would read as something else. Any string, number or
 * nesting whose rendering it is not sure of makes it return undefined, and
 * the caller falls back to the full package (whose start-up cost this
 * avoids).
 * @module
 */
import { resolveGoScalar } from "./yaml_scalar.ts";

/** Internal control flow: thrown anywhere, caught once at the top. */
class Unsure extends Error {}

function unsure(): never {
  throw new Unsure();
}

/** Text only YAML 1.1 (not go-yaml) reads as a timestamp or a number. */
const YAML11_ONLY_REGEXP =
  /^(?:[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$)/;

/** Strings made only of these are written plain or in double quotes. */
const SAFE_TEXT = /^[A-Za-z0-9_./][A-Za-z0-9_./:%+=@-]*$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function text(value: string): string {
  if (value === "") return '""';
  if (!SAFE_TEXT.test(value) || value.endsWith(":")) unsure();
  // Text that would read back as null, a boolean or a number (go-yaml v2
  // rules) is quoted. Timestamps and sexagesimal numbers read back as text
  // in Go, but the yaml package quotes them: left to it, so both writers
  // keep writing the same text.
  if (resolveGoScalar(value)[0] !== "str") return `"${value}"`;
  return YAML11_ONLY_REGEXP.test(value) ? unsure() : value;
}

function scalar(value: unknown): string {
  switch (typeof value) {
    case "string":
      return text(value);
    case "boolean":
      return value ? "true" : "false";
    case "number": {
      if (Object.is(value, -0) || !Number.isFinite(value)) unsure();
      const out = String(value);
      if (Number.isSafeInteger(value) || /^-?\d+\.\d+$/.test(out)) return out;
      return unsure();
    }
    default:
      return unsure();
  }
}

function key(name: string): string {
  const out = text(name);
  return out === name ? out : unsure();
}

function mapping(value: Record<string, unknown>, indent: number): string[] {
  const pad = " ".repeat(indent);
  const lines: string[] = [];
  for (const [name, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const head = `${pad}${key(name)}:`;
    if (Array.isArray(item)) {
      if (item.length === 0) lines.push(`${head} []`);
      else lines.push(head, ...sequence(item, indent));
    } else if (isPlainObject(item)) {
      if (Object.keys(item).length === 0) lines.push(`${head} {}`);
      else lines.push(head, ...mapping(item, indent + 2));
    } else {
      lines.push(`${head} ${scalar(item)}`);
    }
  }
  return lines;
}

function sequence(value: unknown[], indent: number): string[] {
  const pad = " ".repeat(indent);
  const lines: string[] = [];
  for (const item of value) {
    if (Array.isArray(item)) {
      if (item.length > 0) unsure();
      lines.push(`${pad}- []`);
    } else if (isPlainObject(item)) {
      const inner = mapping(item, indent + 2);
      if (inner.length === 0) {
        lines.push(`${pad}- {}`);
        continue;
      }
      // The first entry shares the line with the dash.
      inner[0] = `${pad}- ${(inner[0] as string).slice(indent + 2)}`;
      lines.push(...inner);
    } else {
      lines.push(`${pad}- ${scalar(item)}`);
    }
  }
  return lines;
}

/**
 * Renders a mapping as block YAML, or returns undefined when unsure of any
 * part of it.
 */
export function emitBlockYaml(
  value: Record<string, unknown>,
): string | undefined {
  try {
    const lines = mapping(value, 0);
    return lines.length === 0 ? "{}\n" : `${lines.join("\n")}\n`;
  } catch (err) {
    if (err instanceof Unsure) return undefined;
    throw err;
  }
}
