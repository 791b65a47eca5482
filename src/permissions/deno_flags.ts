/**
 * Renders a {@linkcode PermissionPlan} as Deno CLI flags for `deno run` and
 * `deno compile`. Only scoped `--allow-read/write/net/env/sys/run` lists are
 * produced (run only for a kubeconfig's exec credential plugin): never
 * `--allow-all`, `--allow-ffi` or a bare `--allow-run`.
 * @module
 */
import { PERMISSION_NAMES, type PermissionPlan } from "./types.ts";

/** Escapes one list value: Deno's syntax for a literal comma is `,,`. */
export function escapeFlagValue(value: string): string {
  return value.replaceAll(",", ",,");
}

/**
 * `--allow-<name>=v1,v2` for every non-empty list, in the order read, write,
 * net, env, sys, run. An empty list produces no flag (a bare `--allow-env` would
 * grant everything).
 */
export function toDenoFlags(plan: PermissionPlan): string[] {
  const flags: string[] = [];
  for (const name of PERMISSION_NAMES) {
    const values = plan[name];
    if (values.length === 0) continue;
    flags.push(`--allow-${name}=${values.map(escapeFlagValue).join(",")}`);
  }
  return flags;
}
