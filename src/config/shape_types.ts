/**
 * The plain-data shape of a KubeletConfiguration document: what
 * `config_shape.ts` (generated from the zod schema) is made of, so the
 * common decode path can check types without loading zod.
 * @module
 */

/** A leaf value kind (one of the `schema_types.ts` building blocks). */
export type LeafKind =
  | "int32"
  | "int64"
  | "uint32"
  | "float64"
  | "bool"
  | "string"
  | "duration"
  | "flushFrequency"
  | "quantity"
  | "stringMap"
  | "resourceList"
  | "stringList"
  | "boolMap"
  | "stringListMap"
  | "stringOrNull";

/** An object: its fields in schema order. */
export interface ObjectShape {
  readonly fields: { readonly [name: string]: Shape };
}

/** A list of objects. */
export interface ListShape {
  readonly items: ObjectShape;
}

/** Any node of the shape. */
export type Shape = LeafKind | ObjectShape | ListShape;
