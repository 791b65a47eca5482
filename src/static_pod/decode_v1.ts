/**
 * Decodes JSON-shaped data into a v1 type the way Go's `encoding/json` (the case-sensitive fork
 * in sigs.k8s.io/json that the API machinery's decoder uses) fills the Go struct: every field is
 * checked against its Go type from the generated table, unknown fields are dropped (the decoder
 * is not strict), `null` leaves a field at its zero value, and the first type mismatch is
 * reported with Go's message (`json: cannot unmarshal bool into Go struct field
 * Container.spec.containers.command of type string`). A quantity, int-or-string or time that
 * cannot be read stops the decoding at once, as upstream's `UnmarshalJSON` errors do.
 *
 * The result keeps the JSON shape (JSON names) with the Go value kept where Go keeps one: an
 * explicit empty list or map stays (non-nil in Go), a `null` pointer, list or map is dropped.
 *
 * @module
 */

import { type GoType, goType } from "./go_type.ts";
import {
  DecodedQuantity,
  GoQuantityError,
  parseGoQuantity,
} from "./go_quantity.ts";

type Json = Record<string, unknown>;

/** A Go zero `Quantity{}` (what `null` decodes to). */
const ZERO_QUANTITY = { value: 0n, scale: 0, s: "", format: "" as const };

/** A decoding failure: Go's message; `fatal` when it came from an `UnmarshalJSON` method. */
export class GoDecodeError extends Error {
  constructor(message: string, readonly fatal: boolean) {
    super(message);
    this.name = "GoDecodeError";
  }
}

interface Context {
  /** Innermost struct type (Go `Name()`: without package). */
  struct: string;
  /** JSON names of the struct fields descended into. */
  fields: string[];
  error?: GoDecodeError;
}

const INT_RANGES: Record<string, [number, number]> = {
  int32: [-2147483648, 2147483647],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  int: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** Decodes `value` into Go type `typeName`; throws the first {@linkcode GoDecodeError}. */
export function decodeGo(typeName: string, value: unknown): unknown {
  const ctx: Context = { struct: "", fields: [] };
  const out = decode(typeName, value, ctx);
  if (ctx.error) throw ctx.error;
  return out;
}

function jsonKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "bool";
  return "string";
}

function mismatch(ctx: Context, what: string, typeName: string): undefined {
  if (!ctx.error) {
    const where = ctx.struct
      ? `Go struct field ${ctx.struct}.${ctx.fields.join(".")}`
      : "Go value";
    ctx.error = new GoDecodeError(
      `json: cannot unmarshal ${what} into ${where} of type ${typeName}`,
      false,
    );
  }
  return undefined;
}

function fatal(_ctx: Context, message: string): never {
  throw new GoDecodeError(message, true);
}

function goNumberText(n: number): string {
  return String(n);
}

function decode(typeName: string, value: unknown, ctx: Context): unknown {
  const t = goType(typeName);
  if (value === null) {
    // null leaves a value alone and sets pointers, slices and maps to nil; Unmarshalers see it.
    if (t.name === "intstr.IntOrString") return 0;
    if (t.name === "resource.Quantity") {
      return new DecodedQuantity(ZERO_QUANTITY);
    }
    return undefined;
  }
  switch (t.kind) {
    case "ptr":
      return decode(t.elem!, value, ctx);
    case "slice": {
      if (!Array.isArray(value)) {
        return mismatch(ctx, jsonKind(value), typeName);
      }
      return value.map((item) => {
        const v = decode(t.elem!, item, ctx);
        return v === undefined ? zeroOf(t.elem!) : v;
      });
    }
    case "map": {
      if (jsonKind(value) !== "object") {
        return mismatch(ctx, jsonKind(value), typeName);
      }
      const out: Json = {};
      for (const [k, v] of Object.entries(value as Json)) {
        const d = decode(t.elem!, v, ctx);
        out[k] = d === undefined ? zeroOf(t.elem!) : d;
      }
      return out;
    }
    case "struct":
      return decodeStruct(t, value, ctx);
    case "string":
      return typeof value === "string"
        ? value
        : mismatch(ctx, jsonKind(value), typeName);
    case "bool":
      return typeof value === "boolean"
        ? value
        : mismatch(ctx, jsonKind(value), typeName);
    default: {
      if (t.kind in INT_RANGES) {
        if (typeof value !== "number") {
          return mismatch(ctx, jsonKind(value), typeName);
        }
        const [min, max] = INT_RANGES[t.kind]!;
        if (!Number.isInteger(value) || value < min || value > max) {
          return mismatch(ctx, `number ${goNumberText(value)}`, typeName);
        }
        return value;
      }
      throw new Error(`decodeGo: Go kind ${t.kind} (${typeName}) not handled`);
    }
  }
}

/** The JSON form of a Go zero value where a slice or map element needs one. */
function zeroOf(typeName: string): unknown {
  const t = goType(typeName);
  switch (t.kind) {
    case "ptr":
    case "slice":
    case "map":
      return null;
    case "struct":
      if (t.name === "resource.Quantity") {
        return new DecodedQuantity(ZERO_QUANTITY);
      }
      if (t.name === "intstr.IntOrString") return 0;
      return {};
    case "string":
      return "";
    case "bool":
      return false;
    default:
      return 0;
  }
}

function decodeStruct(t: GoType, value: unknown, ctx: Context): unknown {
  if (t.name === "resource.Quantity") return decodeQuantity(value, ctx);
  if (t.name === "intstr.IntOrString") return decodeIntOrString(value, ctx);
  if (t.name === "v1.Time") return decodeTime(value, ctx);
  if (jsonKind(value) !== "object") {
    return mismatch(ctx, jsonKind(value), t.name);
  }
  const input = value as Json;
  const out: Json = {};
  const fields = jsonFields(t);
  const structName = t.name.slice(t.name.indexOf(".") + 1);
  for (const [key, item] of Object.entries(input)) {
    const f = fields.get(key);
    if (!f) continue; // unknown fields are dropped
    const inner: Context = { struct: structName, fields: [...ctx.fields, key] };
    if (ctx.error) inner.error = ctx.error;
    const decoded = decode(f.type, item, inner);
    if (inner.error) ctx.error = inner.error;
    if (decoded === undefined) {
      if (item === null) delete out[key];
      continue;
    }
    out[key] = decoded;
  }
  return out;
}

const FIELD_CACHE = new Map<string, Map<string, { type: string }>>();

/** JSON name → field type, with inline (embedded) structs' fields promoted. */
function jsonFields(t: GoType): Map<string, { type: string }> {
  const cached = FIELD_CACHE.get(t.name);
  if (cached) return cached;
  const out = new Map<string, { type: string }>();
  for (const f of t.fields ?? []) {
    if (f.inline || (f.embedded && !f.json)) {
      for (const [k, v] of jsonFields(goType(f.type))) {
        if (!out.has(k)) out.set(k, v);
      }
    } else if (f.json && f.json !== "-") {
      out.set(f.json, { type: f.type });
    }
  }
  FIELD_CACHE.set(t.name, out);
  return out;
}

function rawText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function decodeQuantity(value: unknown, ctx: Context): unknown {
  const text = typeof value === "string" ? value.trim() : rawText(value).trim();
  try {
    return new DecodedQuantity(parseGoQuantity(text));
  } catch (cause) {
    if (cause instanceof GoQuantityError) fatal(ctx, cause.message);
    throw cause;
  }
}

function decodeIntOrString(value: unknown, ctx: Context): unknown {
  if (typeof value === "string") return value;
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value < -2147483648 || value > 2147483647) {
      fatal(
        ctx,
        `json: cannot unmarshal number ${
          goNumberText(value)
        } into Go value of type int32`,
      );
    }
    return value;
  }
  fatal(
    ctx,
    `json: cannot unmarshal ${jsonKind(value)} into Go value of type int32`,
  );
}

function decodeTime(value: unknown, ctx: Context): unknown {
  if (typeof value !== "string") {
    fatal(
      ctx,
      `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`,
    );
  }
  if (value !== "" && !RFC3339.test(value)) {
    fatal(
      ctx,
      `parsing time ${
        JSON.stringify(value)
      } as "2006-01-02T15:04:05Z07:00": cannot parse ${
        JSON.stringify(value)
      } as "2006"`,
    );
  }
  return value;
}

/** The shape `time.Parse(time.RFC3339, …)` accepts (range checks aside). */
const RFC3339 =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
