/**
 * `--config` loading (upstream `loadConfigFile`, cmd/kubelet/app/server.go):
 * read, decode strictly
 * with a lenient fallback, default, resolve relative paths, and default
 * `evictionHard`.
 * @module
 */
import { abs as absolute, dir, isAbs, join } from "../util/posix_path.ts";
import { FeatureGateError, type FeatureGates } from "../features/mod.ts";
import { defaultCheckedDocument } from "./defaults.ts";
import { envelopeProblem, isMapping } from "./envelope.ts";
import { ConfigError } from "./errors.ts";
import { withEvictionHardDefaults } from "./eviction_defaults.ts";
import { checkConfigTypes } from "./check_types.ts";
import { parseConfigDocument } from "./read_document.ts";
import { readBoundedTextFile } from "./read_file.ts";
import type { KubeletConfiguration } from "./schema.ts";

/** The logging the loader needs (a subset of `src/log` Logger). */
export interface InfoLogger {
  info(msg: string, kv?: Record<string, unknown>): void;
  v?(level: number): {
    enabled: boolean;
    info(msg: string, kv?: Record<string, unknown>): void;
  };
}

/** Options for loadConfigFile. */
export interface LoadConfigOptions {
  /** Receives `Using lenient decoding as strict decoding failed`. */
  logger?: InfoLogger;
  /** Gates already set from flags; the file's gates go on top. */
  featureGates?: FeatureGates;
  /** OS for the evictionHard defaults (default `Deno.build.os`). */
  os?: string;
}

/** Relative paths in these fields are resolved against the file's dir. */
const PATH_FIELDS: ReadonlyArray<readonly string[]> = [
  ["staticPodPath"],
  ["authentication", "x509", "clientCAFile"],
  ["tlsCertFile"],
  ["tlsPrivateKeyFile"],
  ["resolvConf"],
  ["volumePluginDir"],
  ["podLogsDir"],
];

function resolveRelativePaths(config: KubeletConfiguration, dir: string): void {
  for (const path of PATH_FIELDS) {
    let node = config as unknown as Record<string, unknown>;
    for (const part of path.slice(0, -1)) {
      node = node[part] as Record<string, unknown>;
    }
    const key = path[path.length - 1] as string;
    const value = node[key];
    if (typeof value === "string" && value !== "" && !isAbs(value)) {
      node[key] = join(dir, value);
    }
  }
}

/**
 * Decodes config text (YAML or JSON) into a defaulted configuration, like
 * the `--config` decoder but without file I/O, relative-path resolution or
 * evictionHard defaults. Rejects with ConfigError with the inner upstream
 * text (`failed to decode: …`).
 */
export async function decodeKubeletConfiguration(
  text: string,
  options: LoadConfigOptions = {},
): Promise<KubeletConfiguration> {
  let parsed;
  try {
    parsed = await parseConfigDocument(text);
  } catch (err) {
    throw new ConfigError(`failed to decode: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (!isMapping(parsed.value)) {
    throw new ConfigError(
      "failed to decode: the document must be a mapping with apiVersion: kubelet.config.k8s.io/v1beta1 and kind: KubeletConfiguration",
    );
  }
  const envelope = envelopeProblem(parsed.value);
  if (envelope) throw new ConfigError(`failed to decode: ${envelope}`);
  let checked;
  try {
    checked = checkConfigTypes(parsed.value);
  } catch (err) {
    const field = err instanceof ConfigError ? err.field : undefined;
    throw new ConfigError(
      `failed to decode: ${
        (err as Error).message
      }; fix the value in the config file`,
      { cause: err, ...(field === undefined ? {} : { field }) },
    );
  }
  const strictErrors = [
    ...parsed.strictErrors,
    ...checked.unknownFields.map((f) => `unknown field "${f}"`),
  ];
  if (strictErrors.length > 0) {
    options.logger?.info("Using lenient decoding as strict decoding failed", {
      err: `strict decoding error: ${strictErrors.join(", ")}`,
    });
  }
  return defaultCheckedDocument(
    checked.doc,
    options.featureGates ? { featureGates: options.featureGates } : {},
  );
}

/**
 * Loads a `--config` file. Throws ConfigError whose message is the full
 * upstream text, starting `failed to load kubelet config file, path: …`.
 */
export async function loadConfigFile(
  path: string,
  options: LoadConfigOptions = {},
): Promise<KubeletConfiguration> {
  const outer = `failed to load kubelet config file, path: ${path}, error: `;
  const inner = `failed to load Kubelet config file ${path}, error `;
  const abs = absolute(path);
  let text: string;
  try {
    text = await readBoundedTextFile(abs);
  } catch (err) {
    throw new ConfigError(
      `${outer}${inner}failed to read kubelet config file "${abs}", error: ${
        (err as Error).message
      }`,
      { path: abs, cause: err },
    );
  }
  if (text.length === 0) {
    throw new ConfigError(
      `${outer}${inner}kubelet config file "${abs}" was empty`,
      { path: abs },
    );
  }
  let config: KubeletConfiguration;
  try {
    config = await decodeKubeletConfiguration(text, options);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // A bad feature gate panics upstream; we report it cleanly instead.
    const prefix = err.cause instanceof FeatureGateError
      ? outer
      : outer + inner;
    throw new ConfigError(`${prefix}${err.message}`, {
      path: abs,
      cause: err,
      ...(err.field === undefined ? {} : { field: err.field }),
    });
  }
  resolveRelativePaths(config, dir(abs));
  config.evictionHard = withEvictionHardDefaults(config.evictionHard, {
    mergeDefaults: config.mergeDefaultEvictionSettings,
    os: options.os,
  });
  return config;
}
