/**
 * Shared by `deno task compile`, `deno task bundle`, the ship tests and the
 * bench: turns `[--permissions-from <kubelet-config.yaml>] [--api-server
 * host:port] [kubelet flags…]` into the exact Deno permission flags, using the
 * same planner the kubelet runs at startup (`src/permissions`).
 *
 * Run directly to print the flags, one per line:
 *   deno run --allow-read scripts/permission_lists.ts --permissions-from cfg.yaml --root-dir=/srv/k
 * @module
 */
import { loadConfigFile } from "../src/config/mod.ts";
import { isAbsolute, join } from "node:path";
import {
  type PermissionPlan,
  type PlanConfig,
  type PlanContext,
  type PlanFlags,
  planPermissions,
  STANDARD_LAYOUT,
  toDenoFlags,
} from "../src/permissions/mod.ts";

/** What the build was asked to plan for. */
export interface ListsRequest {
  /** Kubelet config file; undefined = the standard layout. */
  permissionsFrom?: string | undefined;
  /** Kubelet flags that change paths/ports (`--root-dir=/x`, …). */
  kubeletFlags: string[];
  /** Extra API servers (`host:port`) not readable from a kubeconfig now. */
  apiServers: string[];
}

/** A usage error in the script's own arguments. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

type Target =
  | { flag: keyof PlanFlags }
  | { config: keyof PlanConfig; kind: "string" | "number" }
  | { clientCA: true };

/** Kubelet flags that change the permission plan, and where they land. */
const KUBELET_FLAGS: Record<string, Target> = {
  "root-dir": { flag: "rootDir" },
  "kubeconfig": { flag: "kubeconfig" },
  "bootstrap-kubeconfig": { flag: "bootstrapKubeconfig" },
  "cert-dir": { flag: "certDir" },
  "config": { flag: "config" },
  "config-dir": { flag: "configDir" },
  "lock-file": { flag: "lockFile" },
  "pod-manifest-path": { config: "staticPodPath", kind: "string" },
  "manifest-url": { config: "staticPodURL", kind: "string" },
  "container-runtime-endpoint": {
    config: "containerRuntimeEndpoint",
    kind: "string",
  },
  "image-service-endpoint": { config: "imageServiceEndpoint", kind: "string" },
  "tls-cert-file": { config: "tlsCertFile", kind: "string" },
  "tls-private-key-file": { config: "tlsPrivateKeyFile", kind: "string" },
  "client-ca-file": { clientCA: true },
  "resolv-conf": { config: "resolvConf", kind: "string" },
  "address": { config: "address", kind: "string" },
  "port": { config: "port", kind: "number" },
  "read-only-port": { config: "readOnlyPort", kind: "number" },
  "healthz-bind-address": { config: "healthzBindAddress", kind: "string" },
  "healthz-port": { config: "healthzPort", kind: "number" },
};

/**
 * Splits script arguments into our own options and the kubelet flags.
 * `rest` keeps every argument that is neither (e.g. `--print-command`).
 */
export function parseListsArgs(
  args: readonly string[],
  own: ReadonlySet<string> = new Set(),
): { request: ListsRequest; rest: string[] } {
  const request: ListsRequest = { kubeletFlags: [], apiServers: [] };
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [name, inline] = splitFlag(arg);
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = args[++i];
      if (next === undefined || next.startsWith("--")) {
        throw new UsageError(
          `Flag "${name}" needs a value, e.g. ${name}=<value>`,
        );
      }
      return next;
    };
    if (name === "--permissions-from") request.permissionsFrom = value();
    else if (name === "--api-server") request.apiServers.push(value());
    else if (own.has(name)) rest.push(arg);
    else if (name.startsWith("--") && name.slice(2) in KUBELET_FLAGS) {
      request.kubeletFlags.push(`${name}=${value()}`);
    } else if (name.startsWith("--")) {
      rest.push(arg);
    } else {
      throw new UsageError(
        `Unexpected argument "${arg}": write kubelet flags as --flag=value`,
      );
    }
  }
  return { request, rest };
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf("=");
  return eq < 0 ? [arg, undefined] : [arg.slice(0, eq), arg.slice(eq + 1)];
}

async function readConfigFile(path: string): Promise<PlanConfig> {
  try {
    // The kubelet's own loader: same decoding, defaults and relative-path
    // resolution as at runtime, so the baked lists match the startup check.
    return await loadConfigFile(path);
  } catch (cause) {
    throw new UsageError(
      `Cannot use --permissions-from file "${path}": ${
        (cause as Error).message
      }`,
    );
  }
}

function applyFlag(ctx: PlanContext, arg: string): void {
  const [name, value = ""] = splitFlag(arg);
  const target = KUBELET_FLAGS[name.slice(2)]!;
  if ("flag" in target) {
    ctx.flags[target.flag] = value;
  } else if ("clientCA" in target) {
    ctx.config.authentication = { x509: { clientCAFile: value } };
  } else if (target.kind === "number") {
    const port = Number(value);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new UsageError(
        `Flag "${name}" must be a port number, got "${value}"`,
      );
    }
    (ctx.config as Record<string, unknown>)[target.config] = port;
  } else {
    (ctx.config as Record<string, unknown>)[target.config] = value;
  }
}

/** The planner input for a request (standard layout when no config file). */
export async function contextFor(
  request: ListsRequest,
  cwd: string,
): Promise<PlanContext> {
  const ctx: PlanContext = request.permissionsFrom === undefined
    ? structuredClone(STANDARD_LAYOUT)
    : {
      config: await readConfigFile(request.permissionsFrom),
      flags: {
        config: isAbsolute(request.permissionsFrom)
          ? request.permissionsFrom
          : join(cwd, request.permissionsFrom),
      },
    };
  for (const flag of request.kubeletFlags) applyFlag(ctx, flag);
  return ctx;
}

/** The plan for a request; relative paths become absolute against `cwd`. */
export async function planFor(
  request: ListsRequest,
  cwd: string,
): Promise<PermissionPlan> {
  return planPermissions(await contextFor(request, cwd), {
    cwd,
    extraNet: request.apiServers,
  });
}

/** `--no-prompt` plus the scoped lists: what compile and run both use. */
export function runtimeFlags(plan: PermissionPlan): string[] {
  return ["--no-prompt", ...toDenoFlags(plan)];
}

if (import.meta.main) {
  try {
    const { request, rest } = parseListsArgs(Deno.args);
    if (rest.length > 0) throw new UsageError(`Unknown option "${rest[0]}"`);
    const flags = runtimeFlags(await planFor(request, Deno.cwd()));
    // deno-lint-ignore no-console
    console.log(flags.join("\n"));
  } catch (error) {
    // deno-lint-ignore no-console
    console.error(`error: ${(error as Error).message}`);
    Deno.exit(1);
  }
}
