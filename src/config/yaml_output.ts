/**
 * v1beta1 YAML rendering of a configuration (for `--dry-run`), with keys
 * sorted like Go's JSON-to-YAML round trip, written by the `yaml` package
 * (the same one `util/yaml.ts` reads with).
 * @module
 */
import { stringify } from "yaml";
import type { KubeletConfiguration } from "./schema.ts";

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** Renders every field of `config` as a v1beta1 YAML document. */
// deno-lint-ignore require-await
export async function toKubeletConfigurationYaml(
  config: KubeletConfiguration,
): Promise<string> {
  const sorted = sortKeys(config) as Record<string, unknown>;
  return stringify(sorted, { indentSeq: false, version: "1.1", lineWidth: 0 });
}
