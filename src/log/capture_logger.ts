import type { LogFields, Logger, VerboseLogger } from "./types.ts";

/** A record kept by {@linkcode CaptureLogger}. */
export interface CapturedRecord {
  severity: "info" | "warn" | "error";
  verbosity: number;
  msg: string;
  fields: LogFields;
}

/** A logger for tests: keeps every record (at any verbosity) in `records`. */
export class CaptureLogger implements Logger {
  readonly records: CapturedRecord[];
  #fields: LogFields;

  constructor(records: CapturedRecord[] = [], fields: LogFields = {}) {
    this.records = records;
    this.#fields = fields;
  }

  info(msg: string, fields?: LogFields): void {
    this.#push("info", 0, msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.#push("warn", 0, msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.#push("error", 0, msg, fields);
  }

  v(level: number): VerboseLogger {
    return {
      enabled: true,
      info: (msg, fields) => this.#push("info", level, msg, fields),
    };
  }

  with(fields: LogFields): Logger {
    return new CaptureLogger(this.records, { ...this.#fields, ...fields });
  }

  /** Messages of all records, in order. */
  messages(): string[] {
    return this.records.map((r) => r.msg);
  }

  #push(
    severity: CapturedRecord["severity"],
    verbosity: number,
    msg: string,
    fields: LogFields | undefined,
  ): void {
    this.records.push({
      severity,
      verbosity,
      msg,
      fields: { ...this.#fields, ...fields },
    });
  }
}
