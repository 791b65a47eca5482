/**
 * Generic walks over the config schema: derive a decoding schema (every
 * field optional, unknown keys optionally rejected) and rewrite duration
 * leaves into Go's canonical text.
 * @module
 */
import { z } from "zod";
import { formatGoDuration, parseGoDuration } from "../util/go_duration.ts";
import { DURATION, FLUSH_FREQUENCY } from "./schema_types.ts";

function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodOptional
    ? unwrap(schema.unwrap() as z.ZodType)
    : schema;
}

/**
 * A copy of `schema` where every object field (recursively) is optional and
 * `null` is accepted like an absent value. With `strict`, objects reject
 * unknown keys.
 */
export function deepPartial(schema: z.ZodType, strict: boolean): z.ZodType {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    for (const [key, field] of Object.entries(inner.shape)) {
      shape[key] = deepPartial(field as z.ZodType, strict).nullable()
        .optional();
    }
    return strict ? z.strictObject(shape) : z.object(shape);
  }
  if (inner instanceof z.ZodArray) {
    return z.array(deepPartial(inner.element as z.ZodType, strict), {
      error: (issue) =>
        issue.code === "invalid_type" ? "expected a list" : undefined,
    });
  }
  return inner;
}

/** Rewrites every duration leaf of `value` to Go's canonical text, in place. */
export function canonicalizeDurations(
  value: Record<string, unknown>,
  schema: z.ZodType,
): void {
  const inner = unwrap(schema);
  if (!(inner instanceof z.ZodObject)) return;
  for (const [key, field] of Object.entries(inner.shape)) {
    const fieldSchema = unwrap(field as z.ZodType);
    const current = value[key];
    if (
      (fieldSchema === DURATION || fieldSchema === FLUSH_FREQUENCY) &&
      typeof current === "string"
    ) {
      value[key] = formatGoDuration(parseGoDuration(current));
    } else if (
      current !== null && typeof current === "object" &&
      !Array.isArray(current)
    ) {
      canonicalizeDurations(current as Record<string, unknown>, fieldSchema);
    }
  }
}

/** Drops keys whose value is `null` (recursively), like Go's decode of null. */
export function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== null) out[k] = dropNulls(v);
    }
    return out;
  }
  return value;
}

/** Whether the leaf at a dotted path of `schema` is a duration. */
export function isDurationPath(schema: z.ZodType, path: string): boolean {
  let node = unwrap(schema);
  for (const part of path.split(".")) {
    if (!(node instanceof z.ZodObject)) return false;
    const next = node.shape[part] as z.ZodType | undefined;
    if (next === undefined) return false;
    node = unwrap(next);
  }
  return node === DURATION || node === FLUSH_FREQUENCY;
}
