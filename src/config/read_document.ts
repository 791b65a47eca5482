/**
 * The decode steps as used at start-up: the fast YAML subset reader and the
 * zod-free type check first, and the full engine (`decode.ts`: the yaml
 * package and zod) only for documents outside their reach, which includes
 * every document with an error. Loading that engine costs more than the
 * rest of `--dry-run`, so a plain config file never pays for it.
 * @module
 */
import { parseYamlSubset, UNSUPPORTED } from "../util/yaml_subset.ts";
import type { ParsedText } from "./envelope.ts";
import { type CheckedDocument, quickCheckDocument } from "./quick_check.ts";

/**
 * Parses YAML or JSON config text. Duplicate keys are strict errors (the
 * last value wins). Rejects with SyntaxError naming line and column.
 */
export async function parseConfigDocument(text: string): Promise<ParsedText> {
  const value = parseYamlSubset(text);
  if (value !== UNSUPPORTED) return { value, strictErrors: [] };
  return (await import("./decode.ts")).parseConfigText(text);
}

/**
 * Checks a decoded document's types. Rejects with ConfigError naming the
 * first bad field; resolves to the checked copy and the unknown fields.
 */
export async function checkConfigTypes(
  value: Record<string, unknown>,
): Promise<CheckedDocument> {
  return quickCheckDocument(value) ??
    (await import("./decode.ts")).checkDocumentTypes(value);
}
