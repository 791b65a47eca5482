/**
 * Walks over the config schema: the decoding schema derived from it (every
 * field optional and nullable, unknown keys optionally rejected) and the
 * fields of an object schema.
 * @module
 */
import { z } from "zod";

/** The schema inside any `.optional()` wrappers. */
export function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodOptional
    ? unwrap(schema.unwrap() as z.ZodType)
    : schema;
}

/** The fields of an object schema (through `.optional()`), else undefined. */
export function objectFields(
  schema: z.ZodType,
): Record<string, z.ZodType> | undefined {
  const inner = unwrap(schema);
  return inner instanceof z.ZodObject
    ? inner.shape as Record<string, z.ZodType>
    : undefined;
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
