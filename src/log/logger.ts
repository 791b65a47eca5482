import { callerOf, vmodulePattern } from "./caller.ts";
import { formatJson, formatText } from "./format.ts";
import type {
  LogFields,
  Logger,
  LogRecord,
  VerboseLogger,
  VModuleEntry,
} from "./types.ts";

/** Options for {@linkcode createLogger}. */
export interface LoggerOptions {
  /** `text` (klog header lines, the default) or `json` (one object a line). */
  format?: "text" | "json";
  /** The `-v` level. */
  verbosity?: number;
  /** `--vmodule` overrides by file base name (without extension). */
  vmodule?: VModuleEntry[];
  /** Where lines go; defaults to standard error. Receives a line without newline. */
  stderr?: (line: string) => void;
  /** Time source for record timestamps. */
  now?: () => number;
}

const encoder = new TextEncoder();

function writeStderr(line: string): void {
  Deno.stderr.writeSync(encoder.encode(line + "\n"));
}

/** Wall-clock milliseconds with sub-millisecond precision. */
function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

interface Shared {
  format: "text" | "json";
  verbosity: number;
  vmodule: { regexp: RegExp; level: number }[];
  sink: (line: string) => void;
  now: () => number;
  pid: number;
}

const DISABLED: VerboseLogger = { enabled: false, info: () => {} };

class KlogLogger implements Logger {
  #shared: Shared;
  #fields: LogFields;

  constructor(shared: Shared, fields: LogFields) {
    this.#shared = shared;
    this.#fields = fields;
  }

  info(msg: string, fields?: LogFields): void {
    this.#emit("info", 0, msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.#emit("warn", 0, msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.#emit("error", 0, msg, fields);
  }

  v(level: number): VerboseLogger {
    const shared = this.#shared;
    let enabled = level <= shared.verbosity;
    if (!enabled && shared.vmodule.length > 0) {
      enabled = this.#vmoduleAllows(level, new Error().stack);
    }
    if (!enabled) return DISABLED;
    return {
      enabled: true,
      info: (msg, fields) => this.#emit("info", level, msg, fields),
    };
  }

  with(fields: LogFields): Logger {
    return new KlogLogger(this.#shared, { ...this.#fields, ...fields });
  }

  #vmoduleAllows(level: number, stack: string | undefined): boolean {
    const caller = callerOf(stack);
    const file = caller.slice(0, caller.lastIndexOf(":")).replace(
      /\.[^.]+$/,
      "",
    );
    for (const entry of this.#shared.vmodule) {
      if (entry.regexp.test(file)) return level <= entry.level;
    }
    return false;
  }

  #emit(
    severity: LogRecord["severity"],
    verbosity: number,
    msg: string,
    fields: LogFields | undefined,
  ): void {
    const shared = this.#shared;
    const record: LogRecord = {
      severity,
      verbosity,
      msg,
      fields: fields ? { ...this.#fields, ...fields } : this.#fields,
      time: shared.now(),
      caller: callerOf(new Error().stack),
    };
    shared.sink(
      shared.format === "json"
        ? formatJson(record)
        : formatText(record, shared.pid),
    );
  }
}

/**
 * A klog-compatible structured logger.
 *
 * @example
 * ```ts
 * import { createLogger } from "./logger.ts";
 * const lines: string[] = [];
 * const log = createLogger({ verbosity: 2, stderr: (l) => lines.push(l) });
 * log.with({ pod: "default/web" }).info("Pod started");
 * log.v(4).info("not shown at -v=2");
 * console.assert(lines.length === 1);
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const shared: Shared = {
    format: options.format ?? "text",
    verbosity: options.verbosity ?? 0,
    vmodule: (options.vmodule ?? []).map((e) => ({
      regexp: vmodulePattern(e.pattern),
      level: e.level,
    })),
    sink: options.stderr ?? writeStderr,
    now: options.now ?? preciseNow,
    pid: Deno.pid,
  };
  return new KlogLogger(shared, {});
}
