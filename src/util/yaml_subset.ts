/**
 * A small, fast reader for the plain YAML that configuration files and
 * manifests are made of: block mappings and sequences, quoted and plain
 * scalars, one-line flow collections, and JSON documents. Loading the full
 * `yaml` package costs more start-up time than everything else `--dry-run`
 * does, so `yaml.ts` tries this first and falls back to the full reader
 * (`yaml_full.ts`) on {@linkcode UNSUPPORTED}.
 *
 * Plain scalars resolve like go-yaml v2 (`yaml_scalar.ts`), the one
 * semantics of both readers. Anything else outside the subset (anchors,
 * aliases, tags, block scalars, multi-line scalars, duplicate or non-string
 * keys, tabs, several documents, syntax errors…) is UNSUPPORTED, so on the
 * subset the result equals the full reader's, and the full reader writes
 * every error message.
 * @module
 */
import { goScalarValue } from "./yaml_scalar.ts";

/** Returned when the text is outside the subset: use the full parser. */
export const UNSUPPORTED: unique symbol = Symbol("yaml subset: unsupported");

/** Internal control flow: thrown anywhere, caught once at the top. */
class Unsupported extends Error {}

function unsupported(): never {
  throw new Unsupported();
}

/** Deepest flow nesting accepted (the full parser handles deeper). */
const MAX_FLOW_DEPTH = 64;

function plainValue(text: string): unknown {
  return goScalarValue(text);
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
};

/** Reads a quoted scalar starting at `start`; returns it and the end index. */
function readQuoted(s: string, start: number): [string, number] {
  const quote = s[start];
  let out = "";
  let i = start + 1;
  while (i < s.length) {
    const c = s[i] as string;
    // Line folding inside quoted scalars is left to the full parser.
    if (c === "\n") unsupported();
    if (c === quote) {
      if (quote === "'" && s[i + 1] === "'") {
        out += "'";
        i += 2;
        continue;
      }
      return [out, i + 1];
    }
    if (quote === '"' && c === "\\") {
      const e = s[i + 1] ?? "";
      const simple = SIMPLE_ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
        i += 2;
        continue;
      }
      const hex = e === "u" ? s.slice(i + 2, i + 6) : "";
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) unsupported();
      out += String.fromCharCode(parseInt(hex, 16));
      i += 6;
      continue;
    }
    out += c;
    i++;
  }
  return unsupported();
}

/** Whether `rest` is empty or only a comment. */
function isBlankTail(rest: string): boolean {
  const t = rest.trimStart();
  return t === "" || (t[0] === "#" && t.length < rest.length);
}

/** Characters that may not start a plain scalar (YAML c-indicator). */
const INDICATORS = new Set(",[]{}#&*!|>'\"%@`");

function checkPlainStart(text: string): void {
  const c = text[0] ?? "";
  if (INDICATORS.has(c)) unsupported();
  // `-`, `?` and `:` start a plain scalar only when a non-space follows.
  if ((c === "-" || c === "?" || c === ":") && (text[1] ?? " ") === " ") {
    unsupported();
  }
}

/** Flow collections (`[…]`, `{…}`), possibly over several lines. */
class FlowReader {
  i = 0;
  constructor(readonly s: string) {}

  skipSpace(): void {
    while (this.s[this.i] === " " || this.s[this.i] === "\n") this.i++;
    if (this.s[this.i] === "#") unsupported();
  }

  value(depth: number): unknown {
    if (depth > MAX_FLOW_DEPTH) unsupported();
    const c = this.s[this.i];
    if (c === "[") return this.sequence(depth);
    if (c === "{") return this.mapping(depth);
    if (c === '"' || c === "'") {
      const [text, end] = readQuoted(this.s, this.i);
      this.i = end;
      return text;
    }
    return plainValue(this.plain());
  }

  /** A plain scalar up to the next flow indicator or line end. */
  plain(): string {
    const start = this.i;
    while (this.i < this.s.length && !",[]{}\n".includes(this.s[this.i]!)) {
      // `a:b`, `a #b` and friends have context-dependent meanings.
      if (this.s[this.i] === ":" || this.s[this.i] === "#") unsupported();
      this.i++;
    }
    const text = this.s.slice(start, this.i).trimEnd();
    if (text === "") unsupported();
    checkPlainStart(text);
    return text;
  }

  sequence(depth: number): unknown[] {
    const out: unknown[] = [];
    this.i++;
    this.skipSpace();
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.skipSpace();
      const c = this.s[this.i++];
      if (c === "]") return out;
      if (c !== ",") unsupported();
      this.skipSpace();
      if (this.s[this.i] === "]") unsupported();
    }
  }

  mapping(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.i++;
    this.skipSpace();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      let key: string;
      const c = this.s[this.i];
      if (c === '"' || c === "'") {
        [key, this.i] = readQuoted(this.s, this.i);
        this.skipSpace();
        if (this.s[this.i] !== ":") unsupported();
        this.i++;
      } else {
        const start = this.i;
        while (
          this.i < this.s.length && !",[]{}:#\n".includes(this.s[this.i]!)
        ) {
          this.i++;
        }
        const text = this.s.slice(start, this.i).trimEnd();
        // A plain key needs `: ` (`a:b` is one scalar in flow context).
        const after = this.s[this.i + 1];
        if (this.s[this.i] !== ":" || (after !== " " && after !== "\n")) {
          unsupported();
        }
        this.i++;
        checkPlainStart(text);
        const resolved = plainValue(text);
        if (typeof resolved !== "string") unsupported();
        key = resolved;
      }
      addKey(out, key);
      this.skipSpace();
      if (this.s[this.i] === "," || this.s[this.i] === "}") unsupported();
      out[key] = this.value(depth + 1);
      this.skipSpace();
      const next = this.s[this.i++];
      if (next === "}") return out;
      if (next !== ",") unsupported();
      this.skipSpace();
      if (this.s[this.i] === "}") unsupported();
    }
  }
}

/** Repeated keys, `__proto__` and `<<` merge keys are left to the full reader. */
function addKey(map: Record<string, unknown>, key: string): void {
  if (key === "__proto__" || key === "<<" || Object.hasOwn(map, key)) {
    unsupported();
  }
}

/** A value written on the same line as its key or `- `. */
function inlineValue(text: string): unknown {
  const c = text[0];
  if (c === '"' || c === "'") {
    const [value, end] = readQuoted(text, 0);
    if (!isBlankTail(text.slice(end))) unsupported();
    return value;
  }
  if (c === "[" || c === "{") {
    const reader = new FlowReader(text);
    const value = reader.value(0);
    if (!isBlankTail(text.slice(reader.i))) unsupported();
    return value;
  }
  const hash = text.indexOf(" #");
  const plain = (hash < 0 ? text : text.slice(0, hash)).trimEnd();
  checkPlainStart(plain);
  // `a: b: c` is an error; `a:` at the end would be a key.
  if (plain.includes(": ") || plain.endsWith(":")) unsupported();
  return plainValue(plain);
}

interface Line {
  indent: number;
  /** Content after the indentation, right-trimmed. */
  text: string;
  /** Offset of the content in the whole text. */
  start: number;
}

function isSequenceItem(text: string): boolean {
  return text === "-" || text.startsWith("- ");
}

/** Block structure over pre-split lines (comment-only lines removed). */
class BlockReader {
  pos = 0;
  constructor(readonly lines: Line[]) {}

  /** The node whose first line is `lines[pos]` (indent > parentIndent). */
  node(): unknown {
    const line = this.lines[this.pos] as Line;
    if (isSequenceItem(line.text)) return this.sequence(line.indent);
    if (this.keyEnd(line.text) !== undefined) return this.mapping(line.indent);
    this.pos++;
    return inlineValue(line.text);
  }

  sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    for (;;) {
      const line = this.lines[this.pos];
      if (line === undefined || line.indent < indent) return out;
      if (line.indent > indent) unsupported();
      if (!isSequenceItem(line.text)) return out;
      const rest = line.text.slice(1).trimStart();
      if (rest === "" || rest[0] === "#") {
        this.pos++;
        out.push(this.childOf(indent));
        continue;
      }
      // The item's content starts a node at its own column.
      const column = indent + line.text.length - rest.length;
      this.lines[this.pos] = {
        indent: column,
        text: rest,
        start: line.start + line.text.length - rest.length,
      };
      out.push(this.node());
    }
  }

  /** The block value under a key or `-` with nothing after it. */
  childOf(indent: number): unknown {
    const next = this.lines[this.pos];
    if (next !== undefined && next.indent > indent) return this.node();
    return null;
  }

  /** Index just past a mapping key's `:`, or undefined if not a key line. */
  keyEnd(text: string): number | undefined {
    if (text[0] === '"' || text[0] === "'") {
      try {
        const [, end] = readQuoted(text, 0);
        if (text[end] !== ":") return undefined;
        return text[end + 1] === undefined || text[end + 1] === " "
          ? end + 1
          : undefined;
      } catch {
        return undefined;
      }
    }
    for (let i = text.indexOf(":"); i >= 0; i = text.indexOf(":", i + 1)) {
      if (i + 1 === text.length || text[i + 1] === " ") return i + 1;
    }
    return undefined;
  }

  mappingKey(text: string, end: number): string {
    if (text[0] === '"' || text[0] === "'") {
      return readQuoted(text, 0)[0];
    }
    const plain = text.slice(0, end - 1).trimEnd();
    if (plain.includes("#")) unsupported();
    checkPlainStart(plain);
    const key = plainValue(plain);
    return typeof key === "string" ? key : unsupported();
  }

  mapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (;;) {
      const line = this.lines[this.pos];
      if (line === undefined || line.indent < indent) return out;
      if (line.indent > indent) unsupported();
      const end = this.keyEnd(line.text);
      if (end === undefined) {
        // A sequence item here belongs to an enclosing compact sequence.
        if (isSequenceItem(line.text)) return out;
        unsupported();
      }
      const key = this.mappingKey(line.text, end);
      addKey(out, key);
      const rest = line.text.slice(end).trimStart();
      this.pos++;
      if (rest !== "" && rest[0] !== "#") {
        out[key] = inlineValue(rest);
        continue;
      }
      const next = this.lines[this.pos];
      // `key:` followed by `- item` lines at the key's own indentation.
      out[key] = next !== undefined && next.indent === indent &&
          isSequenceItem(next.text)
        ? this.sequence(indent)
        : this.childOf(indent);
    }
  }
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let offset = 0;
  for (const raw of text.split("\n")) {
    const content = raw.trimStart();
    if (content !== "" && content[0] !== "#") {
      const indent = raw.length - content.length;
      lines.push({ indent, text: content.trimEnd(), start: offset + indent });
    }
    offset += raw.length + 1;
  }
  return lines;
}

/**
 * Whitespace other than space and newline (tabs, CR, NBSP, Unicode line
 * separators), control characters and byte order marks: JavaScript's trim
 * and the YAML grammar disagree on these, so they are left to the full
 * parser.
 */
// deno-lint-ignore no-control-regex
const AWKWARD_CHARS = /[^\S \n]|[\x00-\x08\x0e-\x1f\x7f\x85\uFEFF]/;

function parse(text: string): unknown {
  if (AWKWARD_CHARS.test(text)) unsupported();
  const lines = splitLines(text);
  const first = lines[0];
  if (first === undefined) unsupported();
  if (first.indent === 0 && first.text.startsWith("---")) {
    if (!isBlankTail(first.text.slice(3))) unsupported();
    lines.shift();
  }
  const head = lines[0];
  if (head === undefined || head.text[0] === "%") unsupported();
  if (head.text[0] === "[" || head.text[0] === "{") {
    // A flow document (JSON included) may span lines: read the raw text.
    const start = head.start;
    const reader = new FlowReader(text.slice(start));
    const value = reader.value(0);
    if (splitLines(text.slice(start + reader.i)).length > 0) unsupported();
    return value;
  }
  const reader = new BlockReader(lines);
  const value = reader.node();
  if (reader.pos !== lines.length) unsupported();
  if (value === null || typeof value !== "object") unsupported();
  return value;
}

/**
 * Parses `text` if it is within the subset; otherwise returns
 * {@linkcode UNSUPPORTED}. Only collections are returned (a document that
 * is a lone scalar is left to the full parser).
 */
export function parseYamlSubset(text: string): unknown {
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof Unsupported || err instanceof RangeError) {
      return UNSUPPORTED;
    }
    throw err;
  }
}
