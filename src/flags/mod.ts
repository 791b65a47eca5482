/**
 * The kubelet command line: a pflag-compatible FlagSet, the table of every
 * flag, value kinds with upstream syntax and errors, `--help` output and
 * `--node-labels` validation. Parses text only: no file, network or console
 * access happens here.
 * @module
 */

/** The pflag-compatible flag set and its errors. */
export {
  type Flag,
  type FlagDefinition,
  FlagParseError,
  FlagSet,
  type FlagSetOptions,
  type FlagValue,
  HelpRequestedError,
  wordSepNormalize,
  type ZeroKind,
} from "./flag_set.ts";
/** The flag table. */
export {
  CADVISOR_FLAG_DEPRECATION,
  CONFIG_FLAG_DEPRECATION,
  FLAG_SPECS,
  type FlagGroup,
  type FlagSpec,
  UNDEPRECATED_CONFIG_FLAGS,
} from "./flag_specs.ts";
/** CLI-only settings. */
export { defaultKubeletFlags, type KubeletFlags } from "./kubelet_flags.ts";
/** Value kinds. */
export { createValue, noOpValue, type ValueKind } from "./values.ts";
export type { MemoryReservation, Slot, VModuleItem } from "./value_types.ts";
/** The kubelet flag set bound to a config and KubeletFlags. */
export {
  createKubeletFlagSet,
  getPath,
  type KubeletFlagSet,
  type KubeletFlagSetOptions,
  setPath,
} from "./build_flag_set.ts";
/** `--version` value. */
export {
  createVersionValue,
  parseSemanticVersion,
  validateDynamicVersion,
  type VersionRequest,
} from "./version_value.ts";
/** `--help` output. */
export { formatFlagUsages, formatHelp, KUBELET_LONG_HELP } from "./help.ts";
/** `--node-labels` checks. */
export {
  isKubeletLabel,
  isKubernetesLabel,
  NodeLabelsError,
  validateKubeletFlags,
} from "./validate_flags.ts";
