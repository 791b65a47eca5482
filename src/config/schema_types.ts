/**
 * zod building blocks for the v1beta1 KubeletConfiguration document:
 * Go scalar types with clear "expected …" messages. zod schemas are
 * immutable, so one instance is shared by every field of that type.
 * @module
 */
import { z } from "zod";
import { formatGoDuration, parseGoDuration } from "../util/go_duration.ts";
import { parseQuantity } from "../util/quantity.ts";
import { errorMessage } from "../util/error_message.ts";

/**
 * What each leaf kind expects, as the type error says it (`expected …`).
 * One text per Go type, used by every field of that type.
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

// The schemas are used a few times per process: compiling them to fast
// validators (zod's JIT) costs more at start-up than it ever saves.
z.config({ jitless: true });

function expected(what: string) {
  return (issue: { code?: string }) =>
    issue.code === "invalid_type" ? `expected ${what}` : undefined;
}

function checkWith(parse: (text: string) => unknown) {
  return (value: string, ctx: z.RefinementCtx<string>): void => {
    try {
      parse(value);
    } catch (err) {
      ctx.addIssue({
        code: "custom",
        message: errorMessage(err),
      });
    }
  };
}

/** Go `int32`. */
export const INT32 = z.int32({ error: expected(EXPECTED.int32) });
/** Go `int64` (within JavaScript's safe integer range). */
export const INT64 = z.int({ error: expected(EXPECTED.int64) });
/** Go `uint32`. */
export const UINT32 = z.uint32({
  error: expected(EXPECTED.uint32),
});
/** Go `float64`. */
export const FLOAT64 = z.number({ error: expected(EXPECTED.float64) });
/** Go `bool`. */
export const BOOL = z.boolean({ error: expected(EXPECTED.bool) });
/** map[string]bool (`featureGates`). */
export const BOOL_MAP = z.record(z.string(), BOOL, {
  error: expected(EXPECTED.boolMap),
});
/** Go `string`. */
export const STRING = z.string({ error: expected(EXPECTED.string) });
/** `metav1.Duration`: a Go duration string such as "1m0s". */
export const DURATION = z
  .string({ error: expected(EXPECTED.duration) })
  .superRefine(checkWith(parseGoDuration));
/** `logging.flushFrequency`: a duration string or integer nanoseconds. */
export const FLUSH_FREQUENCY = z.preprocess(
  (v) =>
    typeof v === "number" && Number.isInteger(v)
      ? formatGoDuration(v / 1e6)
      : v,
  DURATION,
);
/** `resource.Quantity`: a string (a JSON number is accepted and kept as text). */
export const QUANTITY = z.preprocess(
  (v) => (typeof v === "number" ? String(v) : v),
  z
    .string({ error: expected(EXPECTED.quantity) })
    .superRefine(checkWith(parseQuantity)),
);
/** map[string]string */
export const STRING_MAP = z.record(z.string(), STRING, {
  error: expected(EXPECTED.stringMap),
});
/** map[string]quantity (a core/v1 ResourceList) */
export const RESOURCE_LIST = z.record(z.string(), QUANTITY, {
  error: expected(EXPECTED.resourceList),
});
/** []string */
export const STRING_LIST = z.array(STRING, {
  error: expected(EXPECTED.stringList),
});
