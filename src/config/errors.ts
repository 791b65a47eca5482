/**
 * The config area's error type.
 * @module
 */

/** Options for ConfigError. */
export interface ConfigErrorOptions extends ErrorOptions {
  /** The file the problem is in, when there is one. */
  path?: string;
  /** The config field path (e.g. `logging.format`), when known. */
  field?: string;
}

/**
 * A configuration problem. `message` is the complete, upstream-style text;
 * `path` and `field` let callers branch without parsing it.
 */
export class ConfigError extends Error {
  readonly path: string | undefined;
  readonly field: string | undefined;
  constructor(message: string, options: ConfigErrorOptions = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = "ConfigError";
    this.path = options.path;
    this.field = options.field;
  }
}
