/**
 * The object `main.ts` hands to `runCommand` as `permissions`: the CLI asks it
 * for the flags a config needs (`flagsFor`) and, before starting the kubelet,
 * for problems with the permissions the process actually holds (`check`).
 * @module
 */
import {
  checkPermissions,
  formatMissing,
  type PermissionQuery,
} from "./check.ts";
import { toDenoFlags } from "./deno_flags.ts";
import { PermissionPlanError } from "./errors.ts";
import { PLAN_DEFAULTS, planPermissions } from "./plan.ts";
import type { PlanContext, PlanFlags, PlanOptions } from "./types.ts";

/** What the CLI calls. */
export interface PermissionsHook {
  /** The `--allow-*` flags this config + flags need. */
  flagsFor(ctx: PlanContext): Promise<string[]>;
  /** Problems to report before starting; empty when every grant is held. */
  check(ctx: PlanContext): Promise<string[]>;
}

const FLAG_NAMES: ReadonlyArray<[keyof PlanFlags, string]> = [
  ["rootDir", "--root-dir"],
  ["kubeconfig", "--kubeconfig"],
  ["bootstrapKubeconfig", "--bootstrap-kubeconfig"],
  ["certDir", "--cert-dir"],
  ["configDir", "--config-dir"],
  ["lockFile", "--lock-file"],
  ["hostnameOverride", "--hostname-override"],
  ["imageCredentialProviderConfig", "--image-credential-provider-config"],
  ["imageCredentialProviderBinDir", "--image-credential-provider-bin-dir"],
];

/** The kubelet flags (besides `--config`) that change the plan. */
export function planFlagArgs(flags: PlanFlags): string[] {
  const args: string[] = [];
  for (const [key, flag] of FLAG_NAMES) {
    const value = flags[key];
    if (!value) continue;
    if (key === "rootDir" && value === PLAN_DEFAULTS.rootDir) continue;
    args.push(`${flag}=${value}`);
  }
  return args;
}

/** Options of {@linkcode createPermissionsHook}. */
export interface PermissionsHookOptions extends PlanOptions {
  query?: PermissionQuery;
}

/** Builds a hook; tests pass a fake query and kubeconfig reader. */
export function createPermissionsHook(
  options: PermissionsHookOptions = {},
): PermissionsHook {
  const { query, ...given } = options;
  // Relative --config/--pod-manifest-path values become absolute grants, as
  // the kubelet itself resolves them: a relative grant would bake the build
  // directory's meaning into a compiled binary.
  const planOptions: PlanOptions = given.cwd === undefined
    ? { ...given, ...cwdOption() }
    : given;
  return {
    async flagsFor(ctx: PlanContext): Promise<string[]> {
      return toDenoFlags(await planPermissions(ctx, planOptions));
    },
    async check(ctx: PlanContext): Promise<string[]> {
      let plan;
      try {
        plan = await planPermissions(ctx, planOptions);
      } catch (error) {
        if (error instanceof PermissionPlanError) return [error.message];
        if (error instanceof SyntaxError) return [error.message];
        throw error;
      }
      const missing = await checkPermissions(
        plan,
        query ? { query } : {},
      );
      if (missing.length === 0) return [];
      return [
        formatMissing(missing, {
          configPath: ctx.flags.config,
          kubeletFlags: planFlagArgs(ctx.flags),
        }),
      ];
    },
  };
}

/** The hook `main.ts` passes to `runCommand`. */
export const permissionsHook: PermissionsHook = createPermissionsHook();

/** The working directory, when this process may know it. */
function cwdOption(): { cwd?: string } {
  try {
    return { cwd: Deno.cwd() };
  } catch {
    return {};
  }
}
