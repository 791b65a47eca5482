/**
 * Structured, klog-compatible logging. Components receive a {@linkcode Logger}
 * and never import a global one. Text format is klog's header line; JSON
 * format is component-base's one object per line.
 * @module
 */
export type {
  LogFields,
  Logger,
  LogRecord,
  VerboseLogger,
  VModuleEntry,
} from "./types.ts";
export type { LoggerOptions } from "./logger.ts";
export { createLogger } from "./logger.ts";
