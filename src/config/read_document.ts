/**
 * Config text to a decoded value: the fast YAML subset reader first, the
 * full YAML engine (`decode.ts`, the yaml package) for documents outside
 * its reach, which includes every document with a syntax error.
 * @module
 */
import { parseYamlSubset, UNSUPPORTED } from "../util/yaml_subset.ts";
import type { ParsedText } from "./envelope.ts";

/**
 * Parses YAML or JSON config text. Duplicate keys are strict errors (the
 * last value wins). Rejects with SyntaxError naming line and column.
 */
export async function parseConfigDocument(text: string): Promise<ParsedText> {
  const value = parseYamlSubset(text);
  if (value !== UNSUPPORTED) return { value, strictErrors: [] };
  return (await import("./decode.ts")).parseConfigText(text);
}
