/**
 * `subPathExpr` expansion (upstream `ExpandContainerVolumeMounts`): `$(VAR)` references take
 * values from the container's env, and a reference to a missing or empty variable is an error.
 *
 * @module
 */

import { expandVars } from "../env/container_env.ts";

/**
 * Expands `expr` with `env`.
 * @throws {RangeError} `missing value for A, B`.
 */
export function expandSubPathExpr(
  expr: string,
  env: ReadonlyMap<string, string>,
): string {
  const missing = new Set<string>();
  const lookup = {
    get(key: string): string {
      const value = env.get(key);
      if (!value) missing.add(key);
      return value ?? "";
    },
  } as unknown as ReadonlyMap<string, string>;
  const out = expandVars(expr, lookup);
  if (missing.size > 0) {
    throw new RangeError(`missing value for ${[...missing].sort().join(", ")}`);
  }
  return out;
}
