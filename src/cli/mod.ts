/**
 * The kubelet command: runs the upstream RunE flow over injected effects
 * (stdout, stderr, start). Owns argv handling, `--help`, `--version` and
 * `--dry-run`; starts nothing itself.
 * @module
 */

/** The command entry point and its dependency types. */
export {
  type CommandDeps,
  type CommandPermissions,
  runCommand,
  type StartContext,
} from "./run_command.ts";
/** Steps 1–10 alone (flags, files, precedence), for tools and tests. */
export {
  CommandError,
  flagsModeConfiguration,
  type Resolution,
  resolveConfiguration,
  type ResolveOptions,
} from "./resolve_config.ts";
/** Version constants. */
export {
  BUILD_DATE,
  formatRawVersion,
  GIT_COMMIT,
  GIT_VERSION,
  KUBELET_TS_VERSION,
  KUBERNETES_VERSION,
  type VersionInfo,
  versionInfo,
} from "./version.ts";
