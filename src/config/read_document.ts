/**
 * Config text to a decoded value, through the one YAML reader
 * (`util/yaml.ts`) with upstream's lenient fallback for repeated keys.
 * @module
 */
import { readYaml } from "../util/yaml.ts";
import type { ParsedText } from "./envelope.ts";

/**
 * Parses YAML or JSON config text. Duplicate keys are strict errors (the
 * last value wins). Rejects with SyntaxError naming line and column.
 */
export async function parseConfigDocument(text: string): Promise<ParsedText> {
  const read = await readYaml(text, { allowDuplicateKeys: true });
  return { value: read.value, strictErrors: read.duplicateKeys };
}
