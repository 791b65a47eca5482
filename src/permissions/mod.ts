/**
 * Least-privilege Deno permissions for the kubelet: a pure planner from
 * (config, flags) to the exact `--allow-read/write/net/env/sys` lists, the
 * rendering as CLI flags, and the startup check that reports missing grants
 * with the command that builds a binary holding them. Never grants
 * all/run/ffi. Does not load config files itself (the CLI does).
 * @module
 */

/** Permission kinds, plans, grants and planner inputs. */
export type {
  MissingGrant,
  PermissionGrant,
  PermissionName,
  PermissionPlan,
  PlanConfig,
  PlanContext,
  PlanFlags,
  PlanOptions,
} from "./types.ts";
/** Error for a value that cannot be granted (names the field). */
export { PermissionPlanError } from "./errors.ts";
/** The planner, the standard layout and its defaults. */
export {
  CRI_URL_GRANT,
  KUBELET_ENV_NAMES,
  KUBELET_SYS_NAMES,
  PLAN_DEFAULTS,
  planPermissions,
  STANDARD_LAYOUT,
  standardPlan,
  STREAMING_SERVER_GRANT,
  sysNamesFor,
} from "./plan.ts";
/** API server and credential files named by a kubeconfig. */
export { kubeconfigNeeds, serverHostPort } from "./kubeconfig.ts";
/** Plan → `--allow-*` flags. */
export { escapeFlagValue, toDenoFlags } from "./deno_flags.ts";
/** Startup check and its message. */
export type {
  CheckOptions,
  FormatMissingOptions,
  PermissionQuery,
} from "./check.ts";
export { checkPermissions, formatMissing } from "./check.ts";
/** The CLI hook. */
export type { PermissionsHook, PermissionsHookOptions } from "./hook.ts";
export {
  createPermissionsHook,
  permissionsHook,
  planFlagArgs,
} from "./hook.ts";
