/**
 * What a plain (unquoted, untagged) YAML scalar means, the way go-yaml v2
 * resolves it (`resolve()` in gopkg.in/yaml.v2 `resolve.go`, which
 * `sigs.k8s.io/yaml` uses for every Kubernetes manifest and config):
 * YAML 1.1 booleans (`yes`, `On`, `n`…), `~`/`null`, Go integer syntax
 * (`0777` octal, `0x1F`, `0o17`, `0b101`, `1_000`), YAML-style floats
 * (`1e3`, `.5`, `.inf`, `.nan`); timestamps and anything else stay text.
 * @module
 */
import { parseGoFloat, parseGoInt, parseGoUint } from "./go_strconv.ts";

/** The tag a scalar resolves to. */
export type ScalarTag = "null" | "bool" | "int" | "float" | "str";

/** A resolved scalar: its tag and JSON-shaped value. */
export type ResolvedScalar = readonly [
  ScalarTag,
  string | number | boolean | null,
];

const KEYWORDS = new Map<string, ResolvedScalar>();
function keywords(words: string, value: ResolvedScalar): void {
  for (const word of words.split(" ")) KEYWORDS.set(word, value);
}
keywords("y Y yes Yes YES true True TRUE on On ON", ["bool", true]);
keywords("n N no No NO false False FALSE off Off OFF", ["bool", false]);
keywords("~ null Null NULL", ["null", null]);
KEYWORDS.set("", ["null", null]);
keywords(".nan .NaN .NAN", ["float", NaN]);
keywords(".inf .Inf .INF +.inf +.Inf +.INF", ["float", Infinity]);
keywords("-.inf -.Inf -.INF", ["float", -Infinity]);

/** go-yaml v2's float pattern, tried after the integer parsers fail. */
const YAML_STYLE_FLOAT_REGEXP =
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
/** Text that strconv.ParseInt/ParseUint with base 0 might accept. */
const MAYBE_INT_REGEXP = /^[-+]?[0-9][0-9a-fA-FxXoObB]*$/;

function attempt<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}

/** The first characters go-yaml v2 looks further at; others are text. */
const HINTS = /^[-+0-9yYnNtTfFoO~.]/;

/** Resolves a plain scalar to its tag and value, as go-yaml v2 does. */
export function resolveGoScalar(text: string): ResolvedScalar {
  const known = KEYWORDS.get(text);
  if (known !== undefined) return known;
  if (!HINTS.test(text)) return ["str", text];
  const first = text[0] as string;
  if (first === ".") {
    // Not a keyword: maybe a float such as `.5`.
    const value = attempt(() => parseGoFloat(text));
    return value === undefined || !Number.isFinite(value)
      ? ["str", text]
      : ["float", value];
  }
  if (!/[-+0-9]/.test(first)) return ["str", text];
  // Integers (any Go base-0 syntax), then YAML-style floats, with the
  // underscores removed first.
  const plain = text.replaceAll("_", "");
  if (MAYBE_INT_REGEXP.test(plain)) {
    const value = attempt(() => parseGoInt(plain, { base: 0, bits: 64 })) ??
      attempt(() => parseGoUint(plain, { base: 0, bits: 64 }));
    if (value !== undefined) return ["int", value === 0 ? 0 : value];
  }
  if (YAML_STYLE_FLOAT_REGEXP.test(plain)) {
    const value = Number(plain);
    // strconv.ParseFloat fails on overflow: the scalar stays text.
    if (Number.isFinite(value)) return ["float", value];
  }
  return ["str", text];
}

/** The value of a plain scalar (see {@linkcode resolveGoScalar}). */
export function goScalarValue(
  text: string,
): string | number | boolean | null {
  return resolveGoScalar(text)[1];
}
