/**
 * `--config-dir` drop-ins (upstream `mergeKubeletConfigurations`,
 * cmd/kubelet/app/server.go; docs/flags-and-config.md): every `*.conf`
 * file under the directory, walked recursively in lexical order, is applied
 * as an RFC 7386 JSON merge patch; the result is defaulted again.
 * @module
 */
import { abs as absolute, join } from "../util/posix_path.ts";
import type { FeatureGates } from "../features/mod.ts";
import { defaultCheckedDocument } from "./defaults.ts";
import {
  compactJson,
  isMapping,
  KUBELET_CONFIG_API_VERSION,
  KUBELET_CONFIG_KIND,
} from "./envelope.ts";
import { ConfigError } from "./errors.ts";
import type { InfoLogger } from "./load_config.ts";
import { checkConfigTypes } from "./check_types.ts";
import { parseConfigDocument } from "./read_document.ts";
import { goPathError, readBoundedTextFile } from "./read_file.ts";
import type { KubeletConfiguration } from "./schema.ts";

/** Options for mergeDropInDirectory. */
export interface DropInOptions {
  /** Receives a V(4) line per merged file. */
  logger?: InfoLogger;
  /** Gates already set from flags (used for gate-dependent defaults). */
  featureGates?: FeatureGates;
}

/** RFC 7386 JSON Merge Patch: objects merge, null deletes, the rest replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isMapping(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isMapping(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/**
 * Orders two names the way Go compares strings (upstream's `filepath.WalkDir` sorts entries
 * so): by their UTF-8 bytes, which is code point order. JavaScript's `<` compares UTF-16 code
 * units and puts characters above U+FFFF before U+E000..U+FFFF.
 */
function compareGoStrings(a: string, b: string): number {
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next();
    const q = y.next();
    if (p.done || q.done) return (p.done ? 0 : 1) - (q.done ? 0 : 1);
    const d = p.value.codePointAt(0)! - q.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

/** Lists `*.conf` files under `dir`, recursively, in lexical path order. */
async function walkConfFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const entries: Deno.DirEntry[] = [];
  for await (const entry of Deno.readDir(dir)) entries.push(entry);
  entries.sort((a, b) => compareGoStrings(a.name, b.name));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) found.push(...await walkConfFiles(path));
    else if (entry.name.endsWith(".conf")) found.push(path);
  }
  return found;
}

async function loadDropIn(path: string): Promise<Record<string, unknown>> {
  const outer = `failed to load kubelet dropin file, path: ${path}`;
  const inner = `failed to load drop-in kubelet config file ${path}, error `;
  let text: string;
  try {
    text = await readBoundedTextFile(path);
  } catch (err) {
    throw new ConfigError(
      `${outer}, error: ${inner}failed to read drop-in kubelet config file "${path}", error: ${
        (err as Error).message
      }`,
      { path, cause: err },
    );
  }
  if (text.length === 0) {
    throw new ConfigError(
      `${outer}, error: ${inner}kubelet config file "${path}" was empty`,
      { path },
    );
  }
  let value: unknown;
  try {
    value = (await parseConfigDocument(text)).value;
  } catch (err) {
    throw new ConfigError(
      `${outer}, error: ${inner}${(err as Error).message}`,
      {
        path,
        cause: err,
      },
    );
  }
  if (!isMapping(value) || typeof value.kind !== "string" || !value.kind) {
    throw new ConfigError(
      `${outer}, error: ${inner}Object 'Kind' is missing in '${
        compactJson(value)
      }'`,
      { path },
    );
  }
  const apiVersion = typeof value.apiVersion === "string"
    ? value.apiVersion
    : "";
  if (
    apiVersion !== KUBELET_CONFIG_API_VERSION ||
    value.kind !== KUBELET_CONFIG_KIND
  ) {
    throw new ConfigError(
      `${outer}, unknown apiVersion/kind: ${apiVersion}, Kind=${value.kind}`,
      { path },
    );
  }
  return value;
}

/**
 * Applies every drop-in under `dir` to `base` and re-defaults. Throws
 * ConfigError with the full upstream text (`failed to merge kubelet
 * configs: …`).
 */
export async function mergeDropInDirectory(
  base: KubeletConfiguration,
  dir: string,
  options: DropInOptions = {},
): Promise<KubeletConfiguration> {
  const wrap = "failed to merge kubelet configs: ";
  const abs = absolute(dir);
  let files: string[];
  try {
    files = await walkConfFiles(abs);
  } catch (err) {
    throw new ConfigError(
      `${wrap}failed to walk through kubelet dropin directory "${dir}": ${
        goPathError("lstat", dir, err)
      }`,
      { path: abs, cause: err },
    );
  }
  let merged: unknown = structuredClone(base);
  for (const file of files) {
    let patch: Record<string, unknown>;
    try {
      patch = await loadDropIn(file);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      throw new ConfigError(wrap + err.message, { path: file, cause: err });
    }
    merged = mergePatch(merged, patch);
    options.logger?.v?.(4).info("Merged drop-in kubelet config file", {
      path: file,
    });
  }
  let doc: Record<string, unknown>;
  try {
    doc = checkConfigTypes(merged as Record<string, unknown>).doc;
  } catch (err) {
    throw new ConfigError(
      `${wrap}failed to unmarshal merged JSON into kubelet configuration: ${
        (err as Error).message
      }; fix the value in the config file or its drop-ins`,
      { path: abs, cause: err },
    );
  }
  try {
    return defaultCheckedDocument(
      doc,
      options.featureGates ? { featureGates: options.featureGates } : {},
    );
  } catch (err) {
    throw new ConfigError(`${wrap}${(err as Error).message}`, {
      path: abs,
      cause: err,
    });
  }
}
