/**
 * Startup check: which planned grants the running process lacks, and one
 * message telling the operator how to build a binary that has them.
 * @module
 */
import { parseIpv4Cidr, rangeEnds } from "./cidr.ts";
import { escapeFlagValue } from "./deno_flags.ts";
import {
  type MissingGrant,
  PERMISSION_NAMES,
  type PermissionGrant,
  type PermissionPlan,
} from "./types.ts";

/** Asks Deno about one grant; never prompts. */
export type PermissionQuery = (
  grant: PermissionGrant,
) => Promise<Deno.PermissionState>;

function descriptor(grant: PermissionGrant): Deno.PermissionDescriptor {
  switch (grant.name) {
    case "read":
      return { name: "read", path: grant.value };
    case "write":
      return { name: "write", path: grant.value };
    case "net":
      return { name: "net", host: grant.value };
    case "env":
      return { name: "env", variable: grant.value };
    case "sys":
      return {
        name: "sys",
        kind: grant.value as NonNullable<Deno.SysPermissionDescriptor["kind"]>,
      };
    case "run":
      return { name: "run", command: grant.value };
  }
}

/** The default query: `Deno.permissions.query` (a query never prompts). */
export async function denoQuery(
  grant: PermissionGrant,
): Promise<Deno.PermissionState> {
  const range = grant.name === "net" ? parseIpv4Cidr(grant.value) : undefined;
  if (range) {
    // Deno answers "prompt" for a range itself; a range is held when both its
    // ends are
    const states = await Promise.all(
      rangeEnds(range).map(async (host) =>
        (await Deno.permissions.query({ name: "net", host })).state
      ),
    );
    return states.every((s) => s === "granted") ? "granted" : "prompt";
  }
  const status = await Deno.permissions.query(descriptor(grant));
  return status.state;
}

/** Options of {@linkcode checkPermissions}. */
export interface CheckOptions {
  /** Replaces `Deno.permissions.query` (tests). */
  query?: PermissionQuery;
}

/**
 * Returns every grant of the plan the process does not hold ("prompt" and
 * "denied" both count as missing: compiled binaries run with `--no-prompt`).
 */
export async function checkPermissions(
  plan: PermissionPlan,
  options: CheckOptions = {},
): Promise<MissingGrant[]> {
  const query = options.query ?? denoQuery;
  const missing: MissingGrant[] = [];
  for (const grant of plan.grants) {
    if (await query(grant) !== "granted") missing.push(grant);
  }
  return missing;
}

/** Options of {@linkcode formatMissing}. */
export interface FormatMissingOptions {
  /** The kubelet config file (`--config`) to name in the rebuild command. */
  configPath?: string | undefined;
  /** Kubelet flags that change the plan (e.g. `--root-dir=/x`), repeated in the command. */
  kubeletFlags?: readonly string[];
}

function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_\/.,:=@%+\[\]-]+$/.test(arg)
    ? arg
    : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/**
 * One message listing each missing grant (with the field that needs it) and
 * the exact ways to get a binary that has them: rebuild with
 * `deno task compile --permissions-from <config>`, or pass the `--allow-…`
 * flags to `deno run` / `deno compile`.
 */
export function formatMissing(
  missing: readonly MissingGrant[],
  options: FormatMissingOptions = {},
): string {
  if (missing.length === 0) return "";
  const lines = [
    `kubelet.ts lacks ${missing.length} permission(s) this configuration needs:`,
  ];
  for (const grant of missing) {
    lines.push(
      `  --allow-${grant.name}=${
        escapeFlagValue(grant.value)
      }  (needed by ${grant.reason})`,
    );
  }
  const config = options.configPath ?? "<kubelet-config.yaml>";
  const rebuild = [
    "deno",
    "task",
    "compile",
    "--permissions-from",
    config,
    ...(options.kubeletFlags ?? []),
  ].map(shellQuote).join(" ");
  lines.push(
    "Build a binary with exactly the permissions this configuration needs:",
    `  ${rebuild}`,
  );
  const extra: string[] = [];
  for (const name of PERMISSION_NAMES) {
    const values = missing.filter((g) => g.name === name).map((g) =>
      escapeFlagValue(g.value)
    );
    if (values.length > 0) extra.push(`--allow-${name}=${values.join(",")}`);
  }
  lines.push(
    "or add these to the deno run / deno compile command line next to the existing lists:",
    `  ${extra.map(shellQuote).join(" ")}`,
  );
  return lines.join("\n");
}
