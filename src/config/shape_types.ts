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

/**
 * What each leaf kind expects, as the type error says it (`expected …`).
 * Shared by the zod building blocks and the run-time checker, so both
 * write the same message.
 */
export const EXPECTED = {
  int32: "an int32 (a whole number)",
  int64: "an int64 (a whole number)",
  uint32: "a uint32 (a whole number >= 0)",
  float64: "a float64 (a number)",
  bool: "a boolean (true or false)",
  string: "a string",
  duration: 'a duration string such as "1m0s"',
  quantity: 'a quantity such as "100Mi"',
  stringMap: "a map of string to string",
  resourceList: "a map of resource name to quantity",
  stringList: "a list of strings",
  boolMap: "a map of feature name to boolean",
} as const;
