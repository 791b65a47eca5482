/**
 * Steps 1–10 of upstream's kubelet command (the `RunE` of `NewKubeletCommand`,
 * cmd/kubelet/app/server.go; numbered as in docs/flags-and-config.md): parse
 * the flags into the flags-mode configuration, answer `--help`/`--version`,
 * set feature gates, check `--node-labels`, load `--config` and
 * `--config-dir`, then re-apply the command-line flags on top
 * (`kubeletConfigFlagPrecedence`).
 *
 * The config area (zod, yaml) is imported only after `--help`/`--version`
 * are answered, so those stay fast: argv is first parsed against a
 * placeholder, then again against the flags-mode configuration.
 * @module
 */
import type { KubeletConfiguration } from "../config/mod.ts";
import { createFeatureGates, type FeatureGates } from "../features/mod.ts";
import {
  createKubeletFlagSet,
  defaultKubeletFlags,
  FlagParseError,
  formatHelp,
  HelpRequestedError,
  type KubeletFlags,
  type KubeletFlagSet,
  setPath,
  validateKubeletFlags,
} from "../flags/mod.ts";
import type { Logger } from "../log/mod.ts";
import { formatRawVersion, GIT_VERSION, versionInfo } from "./version.ts";
import { errorMessage } from "../util/error_message.ts";

/** A failure reported as `"command failed" err="<message>"`, exit 1. */
export class CommandError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CommandError";
  }
}

type ConfigArea = typeof import("../config/mod.ts");

function loadConfigArea(): Promise<ConfigArea> {
  return import("../config/mod.ts");
}

/** The flags-only configuration: v1beta1 defaults plus the 4 legacy values. */
export async function flagsModeConfiguration(): Promise<KubeletConfiguration> {
  const { defaultKubeletConfiguration } = await loadConfigArea();
  const config = structuredClone(defaultKubeletConfiguration());
  const doc = config as unknown as Record<string, unknown>;
  setPath(doc, { path: "authentication.anonymous.enabled", value: true });
  setPath(doc, { path: "authentication.webhook.enabled", value: false });
  setPath(doc, { path: "authorization.mode", value: "AlwaysAllow" });
  setPath(doc, { path: "readOnlyPort", value: 10255 });
  return config;
}

/** What steps 1–10 produce. */
export type Resolution =
  | { kind: "exit"; code: number; stdout?: string }
  | {
    kind: "config";
    config: KubeletConfiguration;
    flags: KubeletFlags;
    gates: FeatureGates;
    flagSet: KubeletFlagSet;
    /** Problems already found that `--dry-run` reports with the rest. */
    deferred: string[];
  };

/** Options for {@linkcode resolveConfiguration}. */
export interface ResolveOptions {
  logger: Logger;
  /** Receives deprecation notices from the first parse. */
  stderr: (text: string) => void;
}

function setGates(gates: FeatureGates, map: unknown, logger: Logger): void {
  try {
    const warnings = gates.setFromMap((map ?? {}) as Record<string, boolean>);
    for (const warning of warnings) logger.warn(warning);
  } catch (error) {
    throw new CommandError(
      `failed to set feature gates from initial flags-based config: ${
        errorMessage(error)
      }`,
      { cause: error },
    );
  }
}

async function loadFiles(
  config: KubeletConfiguration,
  flags: KubeletFlags,
  options: { logger: Logger; gates: FeatureGates },
): Promise<KubeletConfiguration> {
  const { ConfigError, loadConfigFile, mergeDropInDirectory } =
    await loadConfigArea();
  let result = config;
  if (flags.config !== "") {
    try {
      result = await loadConfigFile(flags.config, {
        logger: options.logger,
        featureGates: options.gates,
      });
    } catch (error) {
      const text = errorMessage(error);
      throw new CommandError(
        error instanceof ConfigError &&
          text.startsWith("failed to load kubelet config file")
          ? text
          : `failed to load kubelet config file, path: ${flags.config}, error: ${text}`,
        { cause: error },
      );
    }
  }
  if (flags.configDir !== "") {
    try {
      result = await mergeDropInDirectory(result, flags.configDir, {
        logger: options.logger,
        featureGates: options.gates,
      });
    } catch (error) {
      const text = errorMessage(error);
      throw new CommandError(
        text.startsWith("failed to merge kubelet configs")
          ? text
          : `failed to merge kubelet configs: ${text}`,
        { cause: error },
      );
    }
  }
  return result;
}

/**
 * Upstream `kubeletConfigFlagPrecedence`: parse argv again against the loaded
 * config so command-line values win. CLI-only flags go to a throwaway object;
 * feature gates from flags override the file's key by key.
 */
function applyFlagPrecedence(
  config: KubeletConfiguration,
  argv: readonly string[],
): Resolution | undefined {
  const doc = config as unknown as Record<string, unknown>;
  const original = doc.featureGates as Record<string, boolean> | undefined;
  const reparse = createKubeletFlagSet({
    config: doc,
    flags: defaultKubeletFlags(GIT_VERSION),
    buildVersion: GIT_VERSION,
    mode: "precedence",
  });
  try {
    reparse.flagSet.parse(argv);
  } catch (error) {
    // Upstream's re-parse set exits on error: help → 0, else the message on stdout and 2.
    if (error instanceof HelpRequestedError) return { kind: "exit", code: 0 };
    return { kind: "exit", code: 2, stdout: `${errorMessage(error)}\n` };
  }
  if (reparse.flagSet.changed("feature-gates") && original) {
    const fromFlags = (doc.featureGates ?? {}) as Record<string, boolean>;
    const merged = { ...fromFlags };
    for (const [key, value] of Object.entries(original)) {
      if (!(key in fromFlags)) merged[key] = value;
    }
    doc.featureGates = merged;
  }
  return undefined;
}

function parseOrThrow(set: KubeletFlagSet, argv: readonly string[]): void {
  try {
    set.flagSet.parse(argv);
  } catch (error) {
    if (!(error instanceof FlagParseError)) throw error;
    throw new CommandError(`failed to parse kubelet flag: ${error.message}`, {
      cause: error,
    });
  }
}

/** Runs steps 1–10 for `argv`. Throws {@linkcode CommandError}. */
export async function resolveConfiguration(
  argv: readonly string[],
  options: ResolveOptions,
): Promise<Resolution> {
  const { logger } = options;
  const gates = createFeatureGates();
  const probeFlags = defaultKubeletFlags(GIT_VERSION);
  const probe = createKubeletFlagSet({
    config: {},
    flags: probeFlags,
    buildVersion: GIT_VERSION,
    output: options.stderr,
    tableDefaults: true,
    usageSuffix: { "feature-gates": "\n" + gates.knownFeatures().join("\n") },
  });
  parseOrThrow(probe, argv);
  const extra = probe.flagSet.args();
  if (extra.length > 0) throw new CommandError(`unknown command ${extra[0]}`);
  if (probe.helpRequested()) {
    return { kind: "exit", code: 0, stdout: formatHelp(probe.flagSet) };
  }
  const version = probe.versionRequest();
  if (version !== "false") {
    const text = version === "raw"
      ? formatRawVersion(versionInfo(probeFlags.reportedVersion))
      : `Kubernetes ${probeFlags.reportedVersion}`;
    return { kind: "exit", code: 0, stdout: text + "\n" };
  }
  let config = await flagsModeConfiguration();
  const flags = defaultKubeletFlags(GIT_VERSION);
  const flagSet = createKubeletFlagSet({
    config: config as unknown as Record<string, unknown>,
    flags,
    buildVersion: GIT_VERSION,
  });
  parseOrThrow(flagSet, argv);
  setGates(gates, config.featureGates, logger);
  const deferred: string[] = [];
  const labelsProblem = validateKubeletFlags(flags);
  if (labelsProblem) {
    const text = `failed to validate kubelet flags: ${labelsProblem.message}`;
    if (!flags.dryRun) throw new CommandError(text, { cause: labelsProblem });
    deferred.push(text);
  }
  if (flagSet.flagSet.changed("pod-infra-container-image")) {
    logger.info(
      "--pod-infra-container-image will not be pruned by the image garbage collector in kubelet and should also be set in the remote runtime",
    );
  }
  if (flags.config !== "" || flags.configDir !== "") {
    config = await loadFiles(config, flags, { logger, gates });
    const exit = applyFlagPrecedence(config, argv);
    if (exit) return exit;
    setGates(gates, config.featureGates, logger);
  }
  return { kind: "config", config, flags, gates, flagSet, deferred };
}
