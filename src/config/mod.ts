/**
 * KubeletConfiguration v1beta1: the zod schema (single source of truth for
 * the type, and the engine for type errors), defaults, `--config` file
 * loading, `--config-dir` drop-ins, validation and YAML output. This area reads files but starts nothing and
 * never writes to the console.
 * @module
 */

/** Configuration problems, with the full upstream-style message. */
export { ConfigError, type ConfigErrorOptions } from "./errors.ts";
/** v1beta1 defaults (`SetDefaults_KubeletConfiguration`). */
export {
  applyKubeletConfigurationDefaults,
  defaultFlagsOnlyKubeletConfiguration,
  defaultKubeletConfiguration,
  type DefaultsOptions,
} from "./defaults.ts";
/** `--config` loading. */
export {
  decodeKubeletConfiguration,
  type InfoLogger,
  loadConfigFile,
  type LoadConfigOptions,
} from "./load_config.ts";
/** OS default hard eviction thresholds. */
export { defaultEvictionHard } from "./eviction_defaults.ts";
/** YAML output for `--dry-run`. */
export { toKubeletConfigurationYaml } from "./yaml_output.ts";
/** The envelope. */
export { KUBELET_CONFIG_API_VERSION, KUBELET_CONFIG_KIND } from "./envelope.ts";
/** The configuration type (the zod schema stays internal to this area). */
export type { KubeletConfiguration } from "./schema.ts";
/** `--config-dir` drop-ins. */
export {
  type DropInOptions,
  mergeDropInDirectory,
  mergePatch,
} from "./drop_ins.ts";
/** Validation. */
export {
  formatValidationIssues,
  validateKubeletConfiguration,
  type ValidationOptions,
} from "./validation.ts";
export type { ValidationIssue } from "./validation_rules.ts";
