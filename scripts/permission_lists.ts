/**
 * Shared by `deno task compile`, `deno task bundle`, the ship tests and the
 * bench: turns `[--permissions-from <kubelet-config.yaml>] [--api-server
 * host:port] [--csi-driver name] [--device-plugin-socket name] [--getsubids path]
 * [--host-path dir] [kubelet flags…]`
 * into the exact Deno permission flags, using the
 * same planner the kubelet runs at startup (`src/permissions`).
 *
 * Run directly to print the flags, one per line:
 *   deno run -A scripts/permission_lists.ts --permissions-from cfg.yaml --root-dir=/srv/k
 * @module
 */
import { stringify } from "yaml";
import { resolveConfiguration } from "../src/cli/mod.ts";
import { createLogger } from "../src/log/mod.ts";
import { isAbsolute, join } from "node:path";
import {
  type PermissionPlan,
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
  /** Kubelet flags, passed verbatim to the kubelet's own flag parser. */
  kubeletFlags: string[];
  /** Extra API servers (`host:port`) not readable from a kubeconfig now. */
  apiServers: string[];
  /** CSI drivers the node runs (their sockets are granted at the conventional paths). */
  csiDrivers?: string[];
  /** Device plugin socket names (granted in /var/lib/kubelet/device-plugins). */
  devicePluginSockets?: string[];
  /** The getsubids tool the kubelet may run (the kubelet user's subordinate IDs). */
  getsubids?: string;
  /** Host directories of typed hostPath volumes and local PVs (read and write). */
  hostPaths?: string[];
}

/** A usage error in the script's own arguments. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Options the scripts themselves take (everything else goes to the kubelet). */
export interface OwnOptions {
  /** Options that take a value (`--out-dir=x` or `--out-dir x`). */
  valued?: readonly string[];
  /** Boolean options (`--print-command`). */
  boolean?: readonly string[];
}

/**
 * Splits script arguments into the request and the scripts' own options
 * (`rest`, normalised to `--name=value` / `--name`). Every other argument is
 * a kubelet flag and is kept verbatim, in order.
 */
export function parseListsArgs(
  args: readonly string[],
  own: OwnOptions = {},
): { request: ListsRequest; rest: string[] } {
  const request: ListsRequest = { kubeletFlags: [], apiServers: [] };
  const rest: string[] = [];
  const valued = new Set([
    "--permissions-from",
    "--api-server",
    "--csi-driver",
    "--device-plugin-socket",
    "--getsubids",
    "--host-path",
    ...(own.valued ?? []),
  ]);
  const boolean = new Set(own.boolean ?? []);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (boolean.has(name)) {
      rest.push(arg);
      continue;
    }
    if (!valued.has(name)) {
      request.kubeletFlags.push(arg);
      continue;
    }
    let value: string | undefined = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === "") {
      throw new UsageError(
        `Option "${name}" needs a value, e.g. ${name}=<value>`,
      );
    }
    if (name === "--permissions-from") request.permissionsFrom = value;
    else if (name === "--api-server") request.apiServers.push(value);
    else if (name === "--csi-driver") {
      (request.csiDrivers ??= []).push(value);
    } else if (name === "--device-plugin-socket") {
      (request.devicePluginSockets ??= []).push(value);
    } else if (name === "--getsubids") request.getsubids = value;
    else if (name === "--host-path") (request.hostPaths ??= []).push(value);
    else rest.push(`${name}=${value}`);
    value = undefined;
  }
  return { request, rest };
}

function standardConfigYaml(): string {
  return stringify({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    ...STANDARD_LAYOUT.config,
  });
}

function standardFlagArgs(): string[] {
  const f = STANDARD_LAYOUT.flags;
  return [
    `--root-dir=${f.rootDir}`,
    `--kubeconfig=${f.kubeconfig}`,
    `--bootstrap-kubeconfig=${f.bootstrapKubeconfig}`,
  ];
}

/**
 * The planner input for a request, produced by the kubelet's own flag and
 * config resolution (`src/cli` `resolveConfiguration`): same defaults, same
 * precedence, same relative-path handling as at run time, so the lists baked
 * in at build time are exactly what the startup check expects. Without
 * `--permissions-from` the standard layout's config is used.
 */
export async function contextFor(
  request: ListsRequest,
  cwd: string,
): Promise<PlanContext> {
  let tempConfig: string | undefined;
  let argv: string[];
  if (request.permissionsFrom !== undefined) {
    const path = isAbsolute(request.permissionsFrom)
      ? request.permissionsFrom
      : join(cwd, request.permissionsFrom);
    argv = ["--config", path, ...request.kubeletFlags];
  } else {
    tempConfig = await Deno.makeTempFile({
      prefix: "kts-standard-",
      suffix: ".yaml",
    });
    await Deno.writeTextFile(tempConfig, standardConfigYaml());
    argv = [
      "--config",
      tempConfig,
      ...standardFlagArgs(),
      ...request.kubeletFlags,
    ];
  }
  const messages: string[] = [];
  const collect = (text: string) => void messages.push(text);
  try {
    const resolution = await resolveConfiguration(argv, {
      logger: createLogger({ stderr: collect }),
      stderr: collect,
    });
    if (resolution.kind !== "config") {
      throw new UsageError(
        `The kubelet flags ${
          JSON.stringify(request.kubeletFlags)
        } do not describe a configuration (help/version requested?)`,
      );
    }
    const flags: PlanFlags = { ...resolution.flags };
    if (tempConfig !== undefined) flags.config = STANDARD_LAYOUT.flags.config;
    return { config: resolution.config, flags };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const where = request.permissionsFrom === undefined
      ? "the standard layout"
      : `--permissions-from "${request.permissionsFrom}"`;
    throw new UsageError(
      `Cannot resolve the kubelet configuration for ${where}: ${
        (error as Error).message
      }`,
    );
  } finally {
    if (tempConfig !== undefined) await Deno.remove(tempConfig);
  }
}

/** The plan for a request; relative paths become absolute against `cwd`. */
export async function planFor(
  request: ListsRequest,
  cwd: string,
): Promise<PermissionPlan> {
  return await planPermissions(await contextFor(request, cwd), {
    cwd,
    extraNet: request.apiServers,
    ...(request.csiDrivers ? { csiDrivers: request.csiDrivers } : {}),
    ...(request.devicePluginSockets
      ? { devicePluginSockets: request.devicePluginSockets }
      : {}),
    ...(request.getsubids ? { getsubids: request.getsubids } : {}),
    ...(request.hostPaths ? { hostPaths: request.hostPaths } : {}),
  });
}

/** `--no-prompt` plus the scoped lists: what compile and run both use. */
export function runtimeFlags(plan: PermissionPlan): string[] {
  return ["--no-prompt", ...toDenoFlags(plan)];
}

if (import.meta.main) {
  try {
    const { request } = parseListsArgs(Deno.args);
    const flags = runtimeFlags(await planFor(request, Deno.cwd()));
    // deno-lint-ignore no-console
    console.log(flags.join("\n"));
  } catch (error) {
    // deno-lint-ignore no-console
    console.error(`error: ${(error as Error).message}`);
    Deno.exit(1);
  }
}
