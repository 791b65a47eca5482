/**
 * The one way to read YAML (and JSON) in kubelet.ts: config files and
 * drop-ins, static pod manifests, kubeconfigs and simulator scenarios all
 * read through {@linkcode readYaml}, with one Go-compatible semantics, that
 * of `sigs.k8s.io/yaml` (go-yaml v2 under a YAML-to-JSON conversion), which
 * the upstream kubelet uses for all of them:
 *
 * - plain scalars resolve as go-yaml v2 resolves them (`yes`/`on`/`n`
 *   booleans, `0777` octal, `0x1F`, `1e3` and `.5` floats, `~` null;
 *   timestamps stay text), see `yaml_scalar.ts`;
 * - only the first document of a stream is read, as `yaml.Unmarshal` does;
 * - keys that are not strings become JSON keys (`true`, `1`), `<<` merges;
 *   explicit `!!str`/`!!int`/`!!float`/`!!bool`/`!!null`/`!!binary` tags
 *   are honoured;
 * - a repeated key is an error unless the caller asks for upstream's
 *   lenient fallback (then the last value wins and the repeats are listed);
 * - alias expansion is bounded like go-yaml v2 (alias-bomb guard), flow
 *   collections nest at most {@linkcode MAX_FLOW_DEPTH} deep;
 * - `.inf`/`.nan` values fail like Go's JSON encoder (`json: unsupported
 *   value: +Inf`).
 *
 * The `yaml` package parses (all of YAML's syntax, line:column errors) with
 * every scalar left as text; this module builds the value from its nodes.
 * @module
 */
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type YAMLError,
} from "yaml";
import { goQuote } from "./go_strconv.ts";
import { resolveGoScalar } from "./yaml_scalar.ts";

/** Upper bound on flow-collection nesting (`[[[…`), checked before parsing. */
export const MAX_FLOW_DEPTH = 64;

/** Options of {@linkcode readYaml}. */
export interface ReadYamlOptions {
  /**
   * Keep the last value of a repeated key and list the repeat in
   * `duplicateKeys` (upstream's lenient decoding) instead of failing.
   */
  allowDuplicateKeys?: boolean;
}

/** One YAML text, read. */
export interface YamlDocument {
  /** The first document as JSON-shaped data (null for an empty text). */
  value: unknown;
  /** `yaml: line N: key "k" already set in map`, one per repeated key. */
  duplicateKeys: string[];
  /** How many documents the text holds; only the first is read. */
  documents: number;
}

/**
 * Finds the first place where `[`/`{` nesting exceeds MAX_FLOW_DEPTH,
 * skipping quoted scalars and comments. The parser needs time and stack
 * superlinear in that depth, so deep documents are refused early.
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

function syntaxProblem(error: YAMLError): string {
  const pos = error.linePos;
  const first = error.message.split("\n")[0] ?? error.message;
  const where = pos?.[0] ? `line ${pos[0].line}, column ${pos[0].col}: ` : "";
  return `yaml: ${where}${first.replace(/ at line \d+, column \d+:?$/, "")}`;
}

/**
 * go-yaml v2's `allowedAliasRatio`: the share of decoded nodes that may
 * come from alias expansion, 99 % for small documents falling to 10 % for
 * very large ones.
 */
function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= 400_000) return 0.99;
  if (decodeCount >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * (decodeCount - 400_000) / 3_600_000;
}

const TAG_PREFIX = "tag:yaml.org,2002:";

/** A key as `sigs.k8s.io/yaml` writes it in JSON. */
function jsonKey(key: unknown): string {
  if (typeof key === "string") return key;
  if (typeof key === "boolean") return String(key);
  if (typeof key === "number") {
    if (Number.isNaN(key)) return ".nan";
    if (!Number.isFinite(key)) return key > 0 ? ".inf" : "-.inf";
    return String(key);
  }
  throw new SyntaxError(
    `yaml: invalid map key: ${key === null ? "null" : "a collection"}`,
  );
}

/** `%#v` of a key in go-yaml's duplicate-key message. */
function showKey(key: unknown): string {
  return typeof key === "string" ? goQuote(key) : String(key);
}

function setKey(out: Record<string, unknown>, key: string, value: unknown) {
  if (key === "__proto__") {
    Object.defineProperty(out, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else out[key] = value;
}

/** Builds the JSON-shaped value of one document. */
class Builder {
  #decodeCount = 0;
  #aliasCount = 0;
  #aliasDepth = 0;
  readonly duplicateKeys: string[] = [];

  constructor(
    readonly doc: Document,
    readonly lines: LineCounter,
    readonly allowDuplicateKeys: boolean,
  ) {}

  #count(): void {
    this.#decodeCount++;
    if (this.#aliasDepth > 0) this.#aliasCount++;
    if (
      this.#aliasCount > 100 && this.#decodeCount > 1000 &&
      this.#aliasCount / this.#decodeCount >
        allowedAliasRatio(this.#decodeCount)
    ) {
      throw new SyntaxError(
        "yaml: document contains excessive aliasing (possible alias bomb); remove the repeated anchors/aliases",
      );
    }
  }

  #line(node: unknown): number {
    const offset = (node as { range?: [number] } | null)?.range?.[0] ?? 0;
    return this.lines.linePos(offset).line;
  }

  value(node: unknown): unknown {
    this.#count();
    if (node === null || node === undefined) return null;
    if (isAlias(node)) {
      const target = node.resolve(this.doc);
      if (target === undefined) {
        throw new SyntaxError(
          `yaml: unknown anchor '${node.source}' referenced`,
        );
      }
      this.#aliasDepth++;
      try {
        return this.value(target);
      } finally {
        this.#aliasDepth--;
      }
    }
    if (isScalar(node)) return this.#scalar(node);
    if (isSeq(node)) return node.items.map((item) => this.value(item));
    if (isMap(node)) {
      const out: Record<string, unknown> = {};
      this.#mapping(node, out);
      return out;
    }
    throw new SyntaxError("yaml: unsupported node");
  }

  #scalar(node: { value: unknown; tag?: string; type?: string }): unknown {
    const text = String(node.value ?? "");
    const tag = node.tag;
    if (tag === undefined || tag === "!") {
      if (node.type !== "PLAIN" || tag === "!") return text;
      return resolveGoScalar(text)[1];
    }
    if (!tag.startsWith(TAG_PREFIX)) return text;
    const want = tag.slice(TAG_PREFIX.length);
    if (want === "str") return text;
    if (want === "binary") {
      try {
        return atob(text.replace(/\s+/g, ""));
      } catch (cause) {
        throw new SyntaxError(`yaml: !!binary value is not base64`, { cause });
      }
    }
    const [got, value] = resolveGoScalar(text);
    if (got === want || (want === "float" && got === "int")) return value;
    if (!["int", "float", "bool", "null"].includes(want)) return text;
    throw new SyntaxError(
      `yaml: cannot decode !!${got} \`${text}\` as a !!${want}`,
    );
  }

  /** Sets a key, reporting it when it is already there. */
  #set(out: Record<string, unknown>, rawKey: unknown, valueNode: unknown) {
    const key = jsonKey(rawKey);
    const value = this.value(valueNode);
    if (Object.hasOwn(out, key)) {
      const problem = `yaml: line ${this.#line(valueNode)}: key ${
        showKey(rawKey)
      } already set in map`;
      if (!this.allowDuplicateKeys) throw new SyntaxError(problem);
      this.duplicateKeys.push(problem);
    }
    setKey(out, key, value);
  }

  #mapping(node: unknown, out: Record<string, unknown>): void {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const keyNode = pair.key;
      if (
        isScalar(keyNode) && keyNode.value === "<<" &&
        keyNode.type === "PLAIN" && keyNode.tag === undefined
      ) {
        this.#merge(pair.value, out);
        continue;
      }
      this.#set(out, this.value(keyNode), pair.value);
    }
  }

  /** `<<: *a` or `<<: [*a, *b]`: the mapping's entries, in order. */
  #merge(node: unknown, out: Record<string, unknown>): void {
    const sources = isSeq(node) ? node.items : [node];
    for (const source of sources) {
      this.#count();
      let target: unknown = source;
      if (isAlias(source)) {
        target = source.resolve(this.doc);
        this.#aliasDepth++;
      }
      try {
        if (!isMap(target)) {
          throw new SyntaxError(
            "yaml: map merge requires map or sequence of maps as the value",
          );
        }
        this.#mapping(target, out);
      } finally {
        if (isAlias(source)) this.#aliasDepth--;
      }
    }
  }
}

/** Go's `encoding/json` spelling of a float it cannot encode. */
function goFloatText(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  return value > 0 ? "+Inf" : "-Inf";
}

/** Throws like `json.Marshal` for an infinity or NaN anywhere in `value`. */
function checkJsonNumbers(value: unknown): void {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new SyntaxError(
        `json: unsupported value: ${goFloatText(value)}`,
      );
    }
  } else if (Array.isArray(value)) {
    for (const item of value) checkJsonNumbers(item);
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) checkJsonNumbers(item);
  }
}

/**
 * Reads YAML or JSON text with go-yaml v2 semantics (the first document of
 * a stream). Rejects with SyntaxError (`yaml: line L, column C: …`, `yaml:
 * line L: key "k" already set in map`, unknown anchors, bad explicit tags,
 * excessive aliasing, `json: unsupported value: +Inf`…).
 */
// deno-lint-ignore require-await
export async function readYaml(
  text: string,
  options: ReadYamlOptions = {},
): Promise<YamlDocument> {
  const tooDeep = flowDepthProblem(text);
  if (tooDeep) throw new SyntaxError(tooDeep);
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, {
    lineCounter: lines,
    prettyErrors: true,
    schema: "failsafe",
    strict: false,
    uniqueKeys: false,
    version: "1.1",
  });
  // Like go-yaml's Unmarshal, only the first document counts.
  const doc = docs[0];
  if (doc === undefined) {
    const error = (docs as { errors?: YAMLError[] }).errors?.[0];
    if (error) throw new SyntaxError(syntaxProblem(error), { cause: error });
    return { value: null, duplicateKeys: [], documents: 0 };
  }
  const error = doc.errors[0];
  if (error) throw new SyntaxError(syntaxProblem(error), { cause: error });
  const builder = new Builder(
    doc,
    lines,
    options.allowDuplicateKeys ?? false,
  );
  const value = builder.value(doc.contents);
  checkJsonNumbers(value);
  return {
    value,
    duplicateKeys: builder.duplicateKeys,
    documents: docs.length,
  };
}
