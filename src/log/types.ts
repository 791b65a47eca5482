/** Key/value pairs attached to a structured log record. */
export type LogFields = Record<string, unknown>;

/** A leveled, verbosity-gated logger in the klog structured style. */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Info logging gated by verbosity: `logger.v(4).info(...)` prints at `-v=4` or more. */
  v(level: number): VerboseLogger;
  /** A logger that adds `fields` to every record. */
  with(fields: LogFields): Logger;
}

/** The result of `Logger.v(level)`. */
export interface VerboseLogger {
  readonly enabled: boolean;
  info(msg: string, fields?: LogFields): void;
}

/** A per-file verbosity override, as `--vmodule=pattern=N` gives. */
export interface VModuleEntry {
  pattern: string;
  level: number;
}

/** One record as a sink sees it. */
export interface LogRecord {
  severity: "info" | "warn" | "error";
  verbosity: number;
  msg: string;
  fields: LogFields;
  /** Milliseconds since the epoch, with a fraction (klog prints microseconds). */
  time: number;
  /** `file.ts:line` of the call site, when known. */
  caller: string;
}
