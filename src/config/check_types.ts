/**
 * The config type checker: decodes a KubeletConfiguration document with
 * the zod schema of `schema.ts` (every field optional and nullable, see
 * `schema_walk.ts`). It returns the checked copy and the unknown fields
 * (the keys the schema does not name), or
 * throws a ConfigError naming the first bad field in schema order and what
 * it expected (`field maxPods: expected an int32 (a whole number), got
 * "abc"`).
 * @module
 */
import { z } from "zod";
import { formatGoDuration, parseGoDuration } from "../util/go_duration.ts";
import { fieldPath } from "./envelope.ts";
import { ConfigError } from "./errors.ts";
import { KubeletConfigurationSchema } from "./schema.ts";
import { DURATION, FLUSH_FREQUENCY } from "./schema_types.ts";
import { deepPartial, objectFields, unwrap } from "./schema_walk.ts";

/** A type-checked document and the unknown fields that were dropped. */
export interface CheckedDocument {
  /** The checked copy: unknown fields dropped, fields in schema order. */
  doc: Record<string, unknown>;
  /** Dotted paths of the unknown fields (strict-mode problems). */
  unknownFields: string[];
}

type Json = Record<string, unknown>;

/** The decoding schema, built on first use. */
let decoding: z.ZodType | undefined;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Lists the keys of `value` the schema does not know, as zod's strict
 * objects would report them: the known fields' own unknown keys first (in
 * schema order), then the object's, in input order.
 */
function listUnknownFields(
  value: Json,
  schema: z.ZodType,
  path: PropertyKey[],
  out: string[],
): void {
  const fields = objectFields(schema) ?? {};
  for (const [name, field] of Object.entries(fields)) {
    if (!Object.hasOwn(value, name)) continue;
    const item = value[name];
    const inner = unwrap(field);
    if (isObject(item) && objectFields(inner) !== undefined) {
      listUnknownFields(item, inner, [...path, name], out);
    } else if (Array.isArray(item) && inner instanceof z.ZodArray) {
      const element = inner.element as z.ZodType;
      if (objectFields(element) === undefined) continue;
      item.forEach((entry, i) => {
        if (isObject(entry)) {
          listUnknownFields(entry, element, [...path, name, i], out);
        }
      });
    }
  }
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(fields, name)) out.push(fieldPath([...path, name]));
  }
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

/**
 * Checks the types of a decoded document. Throws ConfigError naming the
 * first bad field (in schema order) and what it expected. Returns a checked
 * copy (unknown fields dropped, fields in schema order) and the path of
 * each unknown field.
 */
export function checkConfigTypes(value: Json): CheckedDocument {
  decoding ??= deepPartial(KubeletConfigurationSchema, false);
  const result = decoding.safeParse(value, { reportInput: true });
  if (!result.success) {
    const issue = result.error.issues[0] as z.core.$ZodIssue;
    const field = fieldPath(issue.path);
    const input = (issue as { input?: unknown }).input;
    throw new ConfigError(typeProblemText(field, issue.message, input), {
      field,
      cause: result.error,
    });
  }
  const unknownFields: string[] = [];
  listUnknownFields(value, KubeletConfigurationSchema, [], unknownFields);
  return { doc: result.data as Json, unknownFields };
}

function isDurationSchema(schema: z.ZodType): boolean {
  const leaf = unwrap(schema);
  return leaf === DURATION || leaf === FLUSH_FREQUENCY;
}

/** Whether the field at a dotted path holds a duration. */
export function isDurationPath(path: string): boolean {
  let node: z.ZodType | undefined = KubeletConfigurationSchema;
  for (const part of path.split(".")) {
    node = node === undefined ? undefined : objectFields(node)?.[part];
  }
  return node !== undefined && isDurationSchema(node);
}

/**
 * Rewrites every duration of `value` (outside lists) to Go's canonical
 * text, in place.
 */
export function canonicalizeDurations(
  value: Json,
  schema: z.ZodType = KubeletConfigurationSchema,
): void {
  for (const [name, field] of Object.entries(objectFields(schema) ?? {})) {
    const current = value[name];
    if (typeof current === "string" && isDurationSchema(field)) {
      value[name] = formatGoDuration(parseGoDuration(current));
    } else if (isObject(current)) {
      canonicalizeDurations(current, field);
    }
  }
}
