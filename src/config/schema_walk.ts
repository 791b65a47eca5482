/**
 * The decoding schema derived from the config schema: every field
 * optional and nullable, unknown keys optionally rejected. Not used at run
 * time: `check_types_test.ts` holds the run-time checker to it.
 * @module
 */
import { z } from "zod";

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
