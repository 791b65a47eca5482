/**
 * The one way to read YAML (and JSON) in kubelet.ts: config files and
 * drop-ins, static pod manifests, kubeconfigs and simulator scenarios all
 * read through {@linkcode readYaml}, with one Go-compatible semantics, that
 * of `sigs.k8s.io/yaml` (go-yaml v2 under a YAML-to-JSON conversion), which
 * the upstream kubelet uses for all of them:
 *
 * - plain scalars resolve as go-yaml v2 resolves them (`yes`/`on`/`n`
 *   booleans, `0777` octal, `0x1F`, `1e3` and `.5` floats, `~` null;
 *   timestamps stay text), see `yaml_scalar.ts`;
 * - only the first document of a stream is read, as `yaml.Unmarshal` does;
 * - keys that are not strings become JSON keys (`true`, `1`), `<<` merges;
 * - a repeated key is an error unless the caller asks for upstream's
 *   lenient fallback (then the last value wins and the repeats are listed);
 * - alias expansion is bounded like go-yaml v2 (alias-bomb guard);
 * - `.inf`/`.nan` values fail like Go's JSON encoder (`json: unsupported
 *   value: +Inf`).
 *
 * Plain documents take the fast subset reader (`yaml_subset.ts`); the rest,
 * and every error, go to the full reader (`yaml_full.ts`, which loads the
 * `yaml` package on first use).
 * @module
 */
import { parseYamlSubset, UNSUPPORTED } from "./yaml_subset.ts";

/** Options of {@linkcode readYaml}. */
export interface ReadYamlOptions {
  /**
   * Keep the last value of a repeated key and list the repeat in
   * `duplicateKeys` (upstream's lenient decoding) instead of failing.
   */
  allowDuplicateKeys?: boolean;
}

/** One YAML text, read. */
export interface YamlDocument {
  /** The first document as JSON-shaped data (null for an empty text). */
  value: unknown;
  /** `yaml: line N: key "k" already set in map`, one per repeated key. */
  duplicateKeys: string[];
  /** How many documents the text holds; only the first is read. */
  documents: number;
}

/** Go's `encoding/json` spelling of a float it cannot encode. */
function goFloatText(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  return value > 0 ? "+Inf" : "-Inf";
}

/** Throws like `json.Marshal` for an infinity or NaN anywhere in `value`. */
function checkJsonNumbers(value: unknown): void {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new SyntaxError(
        `json: unsupported value: ${goFloatText(value)}`,
      );
    }
  } else if (Array.isArray(value)) {
    for (const item of value) checkJsonNumbers(item);
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) checkJsonNumbers(item);
  }
}

/**
 * Reads YAML or JSON text with go-yaml v2 semantics. Rejects with
 * SyntaxError (`yaml: line L, column C: …`, `yaml: line L: key "k" already
 * set in map`, `json: unsupported value: +Inf`…).
 */
export async function readYaml(
  text: string,
  options: ReadYamlOptions = {},
): Promise<YamlDocument> {
  const fast = parseYamlSubset(text);
  const read = fast !== UNSUPPORTED
    ? { value: fast, duplicateKeys: [], documents: 1 }
    : (await import("./yaml_full.ts")).readYamlFull(text, {
      allowDuplicateKeys: options.allowDuplicateKeys ?? false,
    });
  checkJsonNumbers(read.value);
  return read;
}
