/**
 * The full YAML engine: parsing with the yaml package (bounded aliases,
 * duplicate keys, line:column errors). Reached through `read_document.ts`,
 * for documents the fast path does not take.
 * @module
 */
import { parseAllDocuments, type SchemaOptions, type YAMLError } from "yaml";
import type { ParsedText } from "./envelope.ts";

/** Upper bound on YAML alias expansion (alias-bomb guard). */
export const MAX_ALIAS_COUNT = 100;

/** Upper bound on flow-collection nesting (`[[[…`), checked before parsing. */
export const MAX_FLOW_DEPTH = 64;

/**
 * Finds the first place where `[`/`{` nesting exceeds MAX_FLOW_DEPTH,
 * skipping quoted scalars and comments. The YAML parser needs time and
 * stack superlinear in that depth, so deep documents are refused early.
 */
function flowDepthProblem(text: string): string | undefined {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") {
      line++;
      lineStart = i + 1;
    } else if (c === "#" && (i === 0 || /\s/.test(text[i - 1] as string))) {
      const end = text.indexOf("\n", i);
      i = (end < 0 ? text.length : end) - 1;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) {
        if (c === '"' && text[j] === "\\") j++;
        else if (text[j] === "\n") {
          line++;
          lineStart = j + 1;
        }
        j++;
      }
      i = j;
    } else if (c === "[" || c === "{") {
      depth++;
      if (depth > MAX_FLOW_DEPTH) {
        return `yaml: line ${line}, column ${
          i - lineStart + 1
        }: collections nested more than ${MAX_FLOW_DEPTH} levels deep; flatten the document`;
      }
    } else if ((c === "]" || c === "}") && depth > 0) depth--;
  }
  return undefined;
}

function yamlProblem(error: { message: string; linePos?: unknown }): string {
  const pos = error.linePos as [{ line: number; col: number }] | undefined;
  const first = error.message.split("\n")[0] ?? error.message;
  const where = pos?.[0] ? `line ${pos[0].line}, column ${pos[0].col}: ` : "";
  return `yaml: ${where}${first.replace(/ at line \d+, column \d+:?$/, "")}`;
}

type Tags = Exclude<
  SchemaOptions["customTags"],
  ((...a: never) => unknown) | null | undefined
>;

/**
 * YAML 1.1 scalars like Go's yaml.v2 (yes/no/on/off booleans, 0777
 * octals) but without timestamps and sexagesimal numbers, which yaml.v2
 * leaves as strings.
 */
function goYamlTags(tags: Tags): Tags {
  return tags.filter((tag) =>
    typeof tag === "string" ||
    (tag.tag !== "tag:yaml.org,2002:timestamp" &&
      (tag as { format?: string }).format !== "TIME")
  );
}

function toValue(text: string, uniqueKeys: boolean): unknown {
  const docs = parseAllDocuments(text, {
    uniqueKeys,
    prettyErrors: true,
    strict: false,
    version: "1.1",
    customTags: goYamlTags,
  });
  // Like Go's yaml.Unmarshal, only the first document counts.
  const doc = docs[0];
  if (doc === undefined) {
    const error = (docs as { errors?: YAMLError[] }).errors?.[0];
    if (error) throw new SyntaxError(yamlProblem(error), { cause: error });
    return null;
  }
  const error = doc.errors[0];
  if (error) throw new SyntaxError(yamlProblem(error), { cause: error });
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    throw new SyntaxError(
      `yaml: document expands more than ${MAX_ALIAS_COUNT} aliases (possible alias bomb); remove the repeated anchors/aliases`,
      { cause: err },
    );
  }
}

interface DuplicateKeyError {
  code: string;
  linePos?: [{ line: number; col: number }];
}

/**
 * Parses YAML or JSON. Duplicate keys are reported as strict errors and
 * resolved by keeping the last value. Throws SyntaxError with line:column.
 */
export function parseConfigText(text: string): ParsedText {
  const tooDeep = flowDepthProblem(text);
  if (tooDeep) throw new SyntaxError(tooDeep);
  try {
    return { value: toValue(text, true), strictErrors: [] };
  } catch (err) {
    const cause = (err as { cause?: DuplicateKeyError }).cause;
    if (cause?.code !== "DUPLICATE_KEY") throw err;
    const line = cause.linePos?.[0]?.line ?? 0;
    const col = cause.linePos?.[0]?.col ?? 1;
    const rest = (text.split("\n")[line - 1] ?? "").slice(col - 1);
    const key = (/^("[^"]*"|'[^']*'|[^:]*)/.exec(rest)?.[1] ?? rest).trim()
      .replace(/^["']|["']$/g, "");
    return {
      value: toValue(text, false),
      strictErrors: [
        `yaml: line ${line}: key ${JSON.stringify(key)} already set in map`,
      ],
    };
  }
}
