/**
 * Reads the first record of a CSV text the way Go's `encoding/csv` Reader
 * does with default settings (comma separator, strict quotes). pflag's
 * `stringSlice` flags (`--cluster-dns=a,b`) parse their value this way.
 * @module
 */

/** A CSV syntax error, worded like Go's `*csv.ParseError`. */
export class CsvParseError extends SyntaxError {
  readonly line: number;
  readonly column: number;
  constructor(reason: string, position: { line: number; column: number }) {
    const { line, column } = position;
    super(`parse error on line ${line}, column ${column}: ${reason}`);
    this.name = "CsvParseError";
    this.line = line;
    this.column = column;
  }
}

const BARE_QUOTE = 'bare " in non-quoted-field';
const BAD_QUOTE = 'extraneous or missing " in quoted-field';

const encoder = new TextEncoder();

function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** Splits into lines the way the Go reader does: `\r\n` → `\n`, a final `\n` added. */
function splitLines(text: string): string[] {
  const lines: string[] = [];
  let rest = text;
  while (rest !== "") {
    const nl = rest.indexOf("\n");
    let line = nl < 0 ? rest : rest.slice(0, nl);
    rest = nl < 0 ? "" : rest.slice(nl + 1);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    lines.push(line + "\n");
  }
  return lines;
}

/**
 * Returns the fields of the first non-empty line (a quoted field may span
 * lines). `""` gives `[]` (pflag special-cases it before calling the reader).
 * Throws {@linkcode CsvParseError} on quoting mistakes.
 */
export function readCsvRecord(text: string): string[] {
  if (text === "") return [];
  const lines = splitLines(text);
  let index = lines.findIndex((l) => l !== "\n");
  if (index < 0) throw new CsvParseError("EOF", { line: 0, column: 0 });
  const startLine = index + 1;
  let lineNo = startLine;
  let line = lines[index] ?? "";
  let col = 1;
  const fields: string[] = [];
  for (;;) {
    if (!line.startsWith('"')) {
      const comma = line.indexOf(",");
      const field = comma >= 0 ? line.slice(0, comma) : line.slice(0, -1);
      const quote = field.indexOf('"');
      if (quote >= 0) {
        const column = col + byteLength(field.slice(0, quote));
        throw new CsvParseError(BARE_QUOTE, { line: lineNo, column });
      }
      fields.push(field);
      if (comma < 0) return fields;
      col += byteLength(field) + 1;
      line = line.slice(comma + 1);
      continue;
    }
    line = line.slice(1);
    col += 1;
    let value = "";
    for (;;) {
      const quote = line.indexOf('"');
      if (quote >= 0) {
        value += line.slice(0, quote);
        col += byteLength(line.slice(0, quote)) + 1;
        line = line.slice(quote + 1);
        if (line.startsWith('"')) {
          value += '"';
          line = line.slice(1);
          col += 1;
        } else if (line.startsWith(",")) {
          line = line.slice(1);
          col += 1;
          fields.push(value);
          break;
        } else if (line === "\n" || line === "") {
          fields.push(value);
          return fields;
        } else {
          throw new CsvParseError(BAD_QUOTE, { line: lineNo, column: col - 1 });
        }
      } else if (line !== "") {
        value += line;
        col += byteLength(line);
        index += 1;
        const next = lines[index];
        if (next === undefined) {
          throw new CsvParseError(BAD_QUOTE, { line: lineNo, column: col });
        }
        line = next;
        lineNo += 1;
        col = 1;
      } else {
        throw new CsvParseError(BAD_QUOTE, { line: lineNo, column: col });
      }
    }
  }
}
