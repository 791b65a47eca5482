/**
 * The text of a thrown value, for messages and log fields.
 * @module
 */

/** `error.message` for an Error, else the value as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
