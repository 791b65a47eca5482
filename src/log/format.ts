import type { LogFields, LogRecord } from "./types.ts";
import { errorMessage } from "../util/error_message.ts";

const SEVERITY_LETTER = { info: "I", warn: "W", error: "E" } as const;

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** The klog header: `I1202 08:12:40.123456   12345 file.ts:12] `. */
export function klogHeader(record: LogRecord, pid: number): string {
  const t = new Date(Math.floor(record.time));
  const micros = pad(Math.floor((record.time % 1000) * 1000), 6);
  const stamp = `${pad(t.getUTCMonth() + 1, 2)}${pad(t.getUTCDate(), 2)} ` +
    `${pad(t.getUTCHours(), 2)}:${pad(t.getUTCMinutes(), 2)}:` +
    `${pad(t.getUTCSeconds(), 2)}.${micros}`;
  return `${SEVERITY_LETTER[record.severity]}${stamp} ${
    String(pid).padStart(7, " ")
  } ${record.caller}] `;
}

function textValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value instanceof Error) return JSON.stringify(value.message);
  if (
    typeof value === "number" || typeof value === "boolean" ||
    typeof value === "bigint"
  ) {
    return String(value);
  }
  if (value === undefined || value === null) return "<nil>";
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return JSON.stringify(String(value));
  }
}

/** Formats one record as a klog text line (no trailing newline). */
export function formatText(record: LogRecord, pid: number): string {
  let line = klogHeader(record, pid) + JSON.stringify(record.msg);
  for (const [key, value] of Object.entries(record.fields)) {
    line += ` ${key}=${textValue(value)}`;
  }
  return line;
}

function jsonValue(value: unknown): unknown {
  if (value instanceof Error) return value.message;
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** Formats one record as a component-base JSON line (no trailing newline). */
export function formatJson(record: LogRecord): string {
  const out: Record<string, unknown> = {
    ts: record.time / 1000,
    caller: record.caller,
    msg: record.msg,
  };
  if (record.severity !== "error") out.v = record.verbosity;
  for (const [key, value] of Object.entries(record.fields as LogFields)) {
    out[key] = key === "err" ? errorMessage(value) : jsonValue(value);
  }
  try {
    return JSON.stringify(out);
  } catch {
    return JSON.stringify({ ...out, fields: "<unserializable>" });
  }
}
