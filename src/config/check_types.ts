/**
 * The config type checker: checks a decoded KubeletConfiguration document
 * against the plain-data {@linkcode CONFIG_SHAPE} (generated from the zod
 * schema in `schema.ts`, which stays the source of the type and of the
 * shape but is not loaded at run time). It returns the checked copy and the
 * unknown fields, or throws a ConfigError naming the first bad field in
 * schema order with the same message the zod decoding schema writes;
 * `check_types_test.ts` holds the two to the same results.
 * @module
 */
import { formatGoDuration, parseGoDuration } from "../util/go_duration.ts";
import { parseQuantity } from "../util/quantity.ts";
import { CONFIG_SHAPE } from "./config_shape.ts";
import { fieldPath } from "./envelope.ts";
import { ConfigError } from "./errors.ts";
import {
  EXPECTED,
  type LeafKind,
  type ObjectShape,
  type Shape,
} from "./shape_types.ts";

/** A type-checked document and the unknown fields that were dropped. */
export interface CheckedDocument {
  /** The checked copy: unknown fields dropped, fields in schema order. */
  doc: Record<string, unknown>;
  /** Dotted paths of the unknown fields (strict-mode problems). */
  unknownFields: string[];
}

type Json = Record<string, unknown>;
type Path = PropertyKey[];

/** The first type problem: where, what, and the offending input. */
class TypeProblem extends Error {
  constructor(
    readonly path: Path,
    message: string,
    readonly input: unknown,
  ) {
    super(message);
  }
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The type name zod's default messages use (`received array`). */
function received(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && Number.isNaN(value)) return "NaN";
  return typeof value;
}

/** Go `%v`-ish rendering of a value for error texts. */
function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return String(value);
}

/**
 * The text of a type problem: `field maxPods: expected an int32 (a whole
 * number), got "abc"` (no `got` part when the input is undefined).
 */
export function typeProblemText(
  field: string,
  message: string,
  input: unknown,
): string {
  const got = input === undefined ? "" : `, got ${show(input)}`;
  return `field ${field || "(document)"}: ${message}${got}`;
}

function expect(path: Path, what: string, value: unknown): never {
  throw new TypeProblem(path, `expected ${what}`, value);
}

function string(value: unknown, path: Path): string {
  return typeof value === "string"
    ? value
    : expect(path, EXPECTED.string, value);
}

/** A text checked by a parser whose error message becomes the problem. */
function parsedText(
  text: string,
  parse: (t: string) => unknown,
  path: Path,
): string {
  try {
    parse(text);
  } catch (err) {
    throw new TypeProblem(
      path,
      err instanceof Error ? err.message : String(err),
      text,
    );
  }
  return text;
}

function duration(value: unknown, path: Path): string {
  return typeof value === "string"
    ? parsedText(value, parseGoDuration, path)
    : expect(path, EXPECTED.duration, value);
}

function quantity(value: unknown, path: Path): string {
  const text = typeof value === "number" ? String(value) : value;
  return typeof text === "string"
    ? parsedText(text, parseQuantity, path)
    : expect(path, EXPECTED.quantity, value);
}

const SAFE = Number.MAX_SAFE_INTEGER;

/** A whole number within [min, max], with zod's range wording. */
function int(
  value: unknown,
  path: Path,
  range: { what: string; min: number; max: number },
): number {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    return expect(path, range.what, value);
  }
  let problem: string | undefined;
  if (value > SAFE) problem = `Too big: expected int to be <=${SAFE}`;
  else if (value < -SAFE) problem = `Too small: expected int to be >=-${SAFE}`;
  else if (value > range.max) {
    problem = `Too big: expected number to be <=${range.max}`;
  } else if (value < range.min) {
    problem = `Too small: expected number to be >=${range.min}`;
  }
  if (problem !== undefined) throw new TypeProblem(path, problem, value);
  return value;
}

/** A map whose values go through `each`, in input key order. */
function record(
  value: unknown,
  path: Path,
  what: string,
  each: (v: unknown, p: Path) => unknown,
): Json {
  if (!isObject(value)) return expect(path, what, value);
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) {
    // Like zod's records, a `__proto__` key is dropped.
    if (key === "__proto__") continue;
    out[key] = each(item, [...path, key]);
  }
  return out;
}

/**
 * A list of strings. A list that is a field of an object is rebuilt by the
 * decoding schema (`schema_walk.ts`), which words its type error as
 * `expected a list`; one that is a map value keeps its own wording.
 */
function stringList(value: unknown, path: Path, what = "a list"): string[] {
  if (!Array.isArray(value)) return expect(path, what, value);
  return value.map((item, i) => string(item, [...path, i]));
}

type LeafCheck = (value: unknown, path: Path) => unknown;

const LEAF_CHECKS: Readonly<Record<LeafKind, LeafCheck>> = {
  int32: (v, p) =>
    int(v, p, { what: EXPECTED.int32, min: -(2 ** 31), max: 2 ** 31 - 1 }),
  int64: (v, p) => int(v, p, { what: EXPECTED.int64, min: -SAFE, max: SAFE }),
  uint32: (v, p) =>
    int(v, p, { what: EXPECTED.uint32, min: 0, max: 2 ** 32 - 1 }),
  float64: (v, p) =>
    typeof v === "number" && Number.isFinite(v)
      ? v
      : expect(p, EXPECTED.float64, v),
  bool: (v, p) => typeof v === "boolean" ? v : expect(p, EXPECTED.bool, v),
  string,
  duration,
  // Integer nanoseconds are accepted and rewritten as a duration string.
  flushFrequency: (v, p) =>
    duration(
      typeof v === "number" && Number.isInteger(v)
        ? formatGoDuration(v / 1e6)
        : v,
      p,
    ),
  quantity,
  stringMap: (v, p) => record(v, p, EXPECTED.stringMap, string),
  resourceList: (v, p) => record(v, p, EXPECTED.resourceList, quantity),
  stringList: (v, p) => stringList(v, p),
  boolMap: (v, p) =>
    record(
      v,
      p,
      EXPECTED.boolMap,
      (b, q) => typeof b === "boolean" ? b : expect(q, EXPECTED.bool, b),
    ),
  stringListMap: (v, p) => {
    if (!isObject(v)) {
      throw new TypeProblem(
        p,
        `Invalid input: expected record, received ${received(v)}`,
        v,
      );
    }
    return record(v, p, "", (l, q) => stringList(l, q, EXPECTED.stringList));
  },
  stringOrNull: (v, p) => {
    if (v === null || typeof v === "string") return v;
    throw new TypeProblem(p, "Invalid input", v);
  },
};

function checkObject(
  value: unknown,
  shape: ObjectShape,
  path: Path,
  unknown: string[],
): Json {
  if (!isObject(value)) {
    throw new TypeProblem(
      path,
      `Invalid input: expected object, received ${received(value)}`,
      value,
    );
  }
  const out: Json = {};
  // Fields are checked and come out in schema order, like zod's objects.
  for (const [name, fieldShape] of Object.entries(shape.fields)) {
    if (!Object.hasOwn(value, name)) continue;
    const item = value[name];
    if (item === undefined) continue;
    out[name] = item === null
      ? null
      : checkValue(item, fieldShape, [...path, name], unknown);
  }
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(shape.fields, name)) {
      unknown.push(fieldPath([...path, name]));
    }
  }
  return out;
}

function checkValue(
  value: unknown,
  shape: Shape,
  path: Path,
  unknown: string[],
): unknown {
  if (typeof shape === "string") return LEAF_CHECKS[shape](value, path);
  if ("items" in shape) {
    if (!Array.isArray(value)) {
      throw new TypeProblem(path, "expected a list", value);
    }
    return value.map((item, i) =>
      checkObject(item, shape.items, [...path, i], unknown)
    );
  }
  return checkObject(value, shape, path, unknown);
}

/**
 * Checks the types of a decoded document. Throws ConfigError naming the
 * first bad field (in schema order) and what it expected. Returns a checked
 * copy (unknown fields dropped, fields in schema order) and the path of
 * each unknown field.
 */
export function checkConfigTypes(value: Json): CheckedDocument {
  const unknownFields: string[] = [];
  try {
    const doc = checkObject(value, CONFIG_SHAPE, [], unknownFields);
    return { doc, unknownFields };
  } catch (err) {
    if (!(err instanceof TypeProblem)) throw err;
    const field = fieldPath(err.path);
    throw new ConfigError(typeProblemText(field, err.message, err.input), {
      field,
      cause: err,
    });
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
