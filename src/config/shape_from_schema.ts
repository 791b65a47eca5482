/**
 * Derives the plain-data {@linkcode Shape} of a zod schema built from the
 * `schema_types.ts` building blocks. `config_shape.ts` holds the result for
 * the KubeletConfiguration schema so that start-up does not load zod;
 * `config_shape_test.ts` fails when the two drift, and
 * `scripts/gen_config_shape.ts` rewrites the file.
 * @module
 */
import { z } from "zod";
import type { LeafKind, ObjectShape, Shape } from "./shape_types.ts";
import * as T from "./schema_types.ts";

const LEAVES = new Map<z.ZodType, LeafKind>([
  [T.INT32, "int32"],
  [T.INT64, "int64"],
  [T.UINT32, "uint32"],
  [T.FLOAT64, "float64"],
  [T.BOOL, "bool"],
  [T.BOOL_MAP, "boolMap"],
  [T.STRING, "string"],
  [T.DURATION, "duration"],
  [T.FLUSH_FREQUENCY, "flushFrequency"],
  [T.QUANTITY, "quantity"],
  [T.STRING_MAP, "stringMap"],
  [T.RESOURCE_LIST, "resourceList"],
  [T.STRING_LIST, "stringList"],
]);

function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodOptional
    ? unwrap(schema.unwrap() as z.ZodType)
    : schema;
}

/** The shape of an object schema; throws for a construct it does not know. */
export function objectShapeOf(schema: z.ZodType, path = ""): ObjectShape {
  const inner = unwrap(schema);
  if (!(inner instanceof z.ZodObject)) {
    throw new TypeError(`${path || "(root)"}: not an object schema`);
  }
  const fields: Record<string, Shape> = {};
  for (const [name, field] of Object.entries(inner.shape)) {
    fields[name] = shapeOf(field as z.ZodType, path ? `${path}.${name}` : name);
  }
  return { fields };
}

function shapeOf(schema: z.ZodType, path: string): Shape {
  const inner = unwrap(schema);
  const leaf = LEAVES.get(inner);
  if (leaf !== undefined) return leaf;
  if (inner instanceof z.ZodObject) return objectShapeOf(inner, path);
  if (inner instanceof z.ZodArray) {
    return { items: objectShapeOf(inner.element as z.ZodType, `${path}[]`) };
  }
  if (inner instanceof z.ZodRecord) {
    const value = inner._zod.def.valueType as z.ZodType;
    if (value === T.STRING_LIST) return "stringListMap";
  }
  if (inner instanceof z.ZodUnion) {
    const options = inner.options as z.ZodType[];
    if (
      options.length === 2 && options[0] === T.STRING &&
      options[1] instanceof z.ZodNull
    ) {
      return "stringOrNull";
    }
  }
  throw new TypeError(
    `${path}: no shape kind for this schema; add it to shape_types.ts and check_types.ts`,
  );
}
