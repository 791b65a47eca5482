/**
 * v1beta1 YAML rendering of a configuration (for `--dry-run`), with keys
 * sorted like Go's JSON-to-YAML round trip. The fast block writer covers
 * ordinary configurations; the yaml package writes the rest.
 * @module
 */
import { emitBlockYaml } from "../util/yaml_emit.ts";
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
export async function toKubeletConfigurationYaml(
  config: KubeletConfiguration,
): Promise<string> {
  const sorted = sortKeys(config) as Record<string, unknown>;
  const fast = emitBlockYaml(sorted);
  if (fast !== undefined) return fast;
  const { stringify } = await import("yaml");
  return stringify(sorted, { indentSeq: false, version: "1.1", lineWidth: 0 });
}
