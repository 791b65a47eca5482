/**
 * Type checks of a decoded KubeletConfiguration document against the
 * plain-data {@linkcode CONFIG_SHAPE}, without loading zod. It accepts
 * exactly what the zod decoding schema accepts and returns the same value
 * (field order, conversions, unknown fields), and gives up (undefined) on
 * anything else: the caller then asks zod, which also writes the error.
 * `quick_check_test.ts` holds the two to the same results.
 * @module
 */
import { formatGoDuration, parseGoDuration } from "../util/go_duration.ts";
import { parseQuantity } from "../util/quantity.ts";
import { CONFIG_SHAPE } from "./config_shape.ts";
import type { LeafKind, ObjectShape, Shape } from "./shape_types.ts";
import { fieldPath } from "./envelope.ts";

/** A type-checked document and the unknown fields that were dropped. */
export interface CheckedDocument {
  doc: Record<string, unknown>;
  unknownFields: string[];
}

/** Internal control flow: thrown anywhere, caught once at the top. */
class GiveUp extends Error {}

function giveUp(): never {
  throw new GiveUp();
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function parses(text: string, parse: (t: string) => unknown): boolean {
  try {
    parse(text);
    return true;
  } catch {
    return false;
  }
}

function duration(value: unknown): string {
  return typeof value === "string" && parses(value, parseGoDuration)
    ? value
    : giveUp();
}

function quantity(value: unknown): string {
  const text = typeof value === "number" ? String(value) : value;
  return typeof text === "string" && parses(text, parseQuantity)
    ? text
    : giveUp();
}

function int(value: unknown, min: number, max: number): number {
  return typeof value === "number" && Number.isInteger(value) &&
      value >= min && value <= max
    ? value
    : giveUp();
}

/** A map whose values go through `each`, in input key order. */
function record(value: unknown, each: (v: unknown) => unknown): Json {
  if (!isObject(value)) giveUp();
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "__proto__") giveUp();
    out[key] = each(item);
  }
  return out;
}

function stringList(value: unknown): string[] {
  if (!Array.isArray(value)) giveUp();
  return value.map((item) => typeof item === "string" ? item : giveUp());
}

function string(value: unknown): string {
  return typeof value === "string" ? value : giveUp();
}

const LEAF_CHECKS: Readonly<Record<LeafKind, (value: unknown) => unknown>> = {
  int32: (v) => int(v, -(2 ** 31), 2 ** 31 - 1),
  int64: (v) => int(v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
  uint32: (v) => int(v, 0, 2 ** 32 - 1),
  float64: (v) => typeof v === "number" && Number.isFinite(v) ? v : giveUp(),
  bool: (v) => typeof v === "boolean" ? v : giveUp(),
  string,
  duration,
  // Integer nanoseconds are accepted and rewritten as a duration string.
  flushFrequency: (v) =>
    duration(
      typeof v === "number" && Number.isInteger(v)
        ? formatGoDuration(v / 1e6)
        : v,
    ),
  quantity,
  stringMap: (v) => record(v, string),
  resourceList: (v) => record(v, quantity),
  stringList,
  boolMap: (v) => record(v, (b) => typeof b === "boolean" ? b : giveUp()),
  stringListMap: (v) => record(v, stringList),
  stringOrNull: (v) => v === null ? v : string(v),
};

function checkObject(
  value: unknown,
  shape: ObjectShape,
  path: PropertyKey[],
  unknown: string[],
): Json {
  if (!isObject(value)) giveUp();
  const out: Json = {};
  // Fields come out in schema order, like zod's object output.
  for (const [name, fieldShape] of Object.entries(shape.fields)) {
    if (!Object.hasOwn(value, name)) continue;
    const item = value[name];
    if (item === undefined) giveUp();
    out[name] = item === null
      ? null
      : checkValue(item, fieldShape, [...path, name], unknown);
  }
  for (const name of Object.keys(value)) {
    if (name === "__proto__") giveUp();
    if (!Object.hasOwn(shape.fields, name)) {
      unknown.push(fieldPath([...path, name]));
    }
  }
  return out;
}

function checkValue(
  value: unknown,
  shape: Shape,
  path: PropertyKey[],
  unknown: string[],
): unknown {
  if (typeof shape === "string") return LEAF_CHECKS[shape](value);
  if ("items" in shape) {
    if (!Array.isArray(value)) giveUp();
    return value.map((item, i) =>
      checkObject(item, shape.items, [...path, i], unknown)
    );
  }
  return checkObject(value, shape, path, unknown);
}

/**
 * Checks a decoded document's types: the checked copy (unknown fields
 * dropped, fields in schema order) and the unknown field paths; undefined
 * when the document does not pass or is unusual in any way.
 */
export function quickCheckDocument(
  value: unknown,
): CheckedDocument | undefined {
  const unknownFields: string[] = [];
  try {
    const doc = checkObject(value, CONFIG_SHAPE, [], unknownFields);
    return { doc, unknownFields };
  } catch (err) {
    if (err instanceof GiveUp) return undefined;
    throw err;
  }
}

function leafAt(path: string): Shape | undefined {
  let node: Shape | undefined = CONFIG_SHAPE;
  for (const part of path.split(".")) {
    if (node === undefined || typeof node === "string" || "items" in node) {
      return undefined;
    }
    node = node.fields[part];
  }
  return node;
}

/** Whether the field at a dotted path holds a duration. */
export function isDurationPath(path: string): boolean {
  const leaf = leafAt(path);
  return leaf === "duration" || leaf === "flushFrequency";
}

/**
 * Rewrites every duration of `value` (outside lists) to Go's canonical
 * text, in place.
 */
export function canonicalizeDurations(
  value: Json,
  shape: ObjectShape = CONFIG_SHAPE,
): void {
  for (const [name, fieldShape] of Object.entries(shape.fields)) {
    const current = value[name];
    if (
      (fieldShape === "duration" || fieldShape === "flushFrequency") &&
      typeof current === "string"
    ) {
      value[name] = formatGoDuration(parseGoDuration(current));
    } else if (
      isObject(current) && typeof fieldShape !== "string" &&
      !("items" in fieldShape)
    ) {
      canonicalizeDurations(current, fieldShape);
    }
  }
}
