/**
 * Shared fixtures for the ship tests: a throw-away node layout (root dir,
 * static pod dir, logs dir, kubelet config on the `sim://` runtime), the
 * permission lists `deno task compile` would bake for it, and a bundle of
 * `main.ts` built with `scripts/bundle.ts`.
 * @module
 */
import { join } from "node:path";
import {
  parseListsArgs,
  planFor,
  runtimeFlags,
} from "../../scripts/permission_lists.ts";
import type { PermissionPlan } from "../../src/permissions/mod.ts";
import type { CriRuntime } from "../../src/runtime/mod.ts";
import { removeTree } from "../_mounts.ts";

export const ROOT = new URL("../..", import.meta.url).pathname;

/** True once the CLI and kubelet entry points other engineers own exist. */
export function exists(path: string): boolean {
  try {
    Deno.statSync(join(ROOT, path));
    return true;
  } catch {
    return false;
  }
}

export const CLI_READY = exists("src/cli/mod.ts") && exists("main.ts");
export const KUBELET_READY = CLI_READY &&
  exists("src/kubelet/create_kubelet.ts");

/** Whether this machine can create a network namespace (root + unshare). */
export function canUnshareNet(): boolean {
  try {
    const { code } = new Deno.Command("unshare", {
      args: ["-n", "true"],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return code === 0;
  } catch {
    return false;
  }
}

/** A TCP port free on `hostname` right now. */
export function freePort(hostname = "127.0.0.1"): number {
  const listener = Deno.listen({ hostname, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

const STATIC_POD = `apiVersion: v1
kind: Pod
metadata:
  name: ship-web
  namespace: default
spec:
  containers:
  - name: web
    image: registry.k8s.io/pause:3.10
`;

/** A temp node layout plus the exact lists compile would bake for it. */
export interface TestLayout extends AsyncDisposable {
  dir: string;
  root: string;
  manifests: string;
  logs: string;
  config: string;
  /** Kubelet arguments: `--config <file> --root-dir=<dir> --cert-dir=<dir>/pki`. */
  kubeletArgs: string[];
  /** `--no-prompt` + the scoped `--allow-*` lists. */
  denoFlags: string[];
  plan: PermissionPlan;
}

/** Creates the layout; `await using` removes it. */
export async function makeLayout(): Promise<TestLayout> {
  const dir = await Deno.makeTempDir({ prefix: "kts-ship-" });
  const root = join(dir, "root");
  const manifests = join(dir, "manifests");
  const logs = join(dir, "logs");
  const config = join(dir, "config.yaml");
  await Deno.mkdir(root);
  await Deno.mkdir(manifests);
  await Deno.mkdir(logs);
  await Deno.writeTextFile(join(manifests, "web.yaml"), STATIC_POD);
  await Deno.writeTextFile(
    config,
    [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      "containerRuntimeEndpoint: sim://",
      `staticPodPath: ${manifests}`,
      `podLogsDir: ${logs}`,
      "address: 127.0.0.1",
      `port: ${freePort()}`,
      `healthzPort: ${freePort()}`,
      "fileCheckFrequency: 1s",
      "",
    ].join("\n"),
  );
  const rootFlags = [`--root-dir=${root}`, `--cert-dir=${join(root, "pki")}`];
  const kubeletArgs = ["--config", config, ...rootFlags];
  const { request } = parseListsArgs([
    "--permissions-from",
    config,
    ...rootFlags,
  ]);
  const plan = await planFor(request, dir);
  return {
    dir,
    root,
    manifests,
    logs,
    config,
    kubeletArgs,
    denoFlags: runtimeFlags(plan),
    plan,
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Environment for child deno processes: no update check, no colour. */
export const CHILD_ENV = { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" };

/**
 * The Deno permission flags `main.ts --dry-run <args>` says the configuration needs (its
 * `# deno permission:` lines); throws with the output when the dry run fails.
 */
export async function dryRunGrants(args: string[]): Promise<string[]> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "main.ts"), "--dry-run", ...args],
    env: CHILD_ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(result.stdout);
  if (!result.success) {
    throw new Error(
      `--dry-run failed: ${out}${new TextDecoder().decode(result.stderr)}`,
    );
  }
  const prefix = "# deno permission: ";
  return out.split("\n").filter((l) => l.startsWith(prefix)).map((l) =>
    l.slice(prefix.length)
  );
}

/**
 * Bundles `main.ts` into `<dir>/kubelet.js` via the bundle script; with
 * `offline` inside `unshare -n` (no network at all).
 */
export async function bundleInto(
  dir: string,
  options: { offline?: boolean } = {},
): Promise<string> {
  const out = join(dir, "kubelet.js");
  const args = ["run", "-A", join(ROOT, "scripts/bundle.ts"), `--out=${out}`];
  const result = await new Deno.Command(
    options.offline ? "unshare" : Deno.execPath(),
    {
      args: options.offline ? ["-n", Deno.execPath(), ...args] : args,
      cwd: ROOT,
      env: CHILD_ENV,
      stdout: "piped",
      stderr: "piped",
    },
  ).output();
  if (result.code !== 0) {
    const text = new TextDecoder().decode(result.stderr) +
      new TextDecoder().decode(result.stdout);
    throw new Error(`scripts/bundle.ts failed:\n${text}`);
  }
  return out;
}

/** Is one audited access inside the plan's lists? */
export function allowedByPlan(
  plan: PermissionPlan,
  record: AuditRecord,
): boolean {
  const { permission } = record;
  const value = record.value ?? "";
  switch (permission) {
    case "read":
    case "write":
      return plan[permission].some((p) =>
        value === p || value.startsWith(p.endsWith("/") ? p : p + "/")
      );
    case "net":
      // Exact match; a port-less host entry would cover all its ports.
      return plan.net.some((n) =>
        n === value ||
        (!n.startsWith("unix:") && !/:\d+$/.test(n) &&
          value.startsWith(n + ":"))
      );
    case "env":
    case "sys":
    case "run":
      return plan[permission].includes(value);
    default:
      return false;
  }
}

/** One line of a `DENO_AUDIT_PERMISSIONS` file. */
export interface AuditRecord {
  permission: string;
  value: string | null;
}

/** Parses an audit file (JSON lines). */
export function readAudit(path: string): AuditRecord[] {
  let text = "";
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return text.split("\n").filter((l) => l.trim() !== "").map((l) =>
    JSON.parse(l) as AuditRecord
  );
}

/** A bundled kubelet started under exactly its `--dry-run` permission lists. */
export interface BundledKubelet {
  /** The `--allow-*` flags it runs with. */
  grants: string[];
  child: Deno.ChildProcess;
}

/**
 * Asks `main.ts --dry-run` for the grants `args` need, bundles `main.ts` into `dir` and starts
 * the bundle with those grants only (`--no-prompt`); stderr is piped, the rest is discarded.
 */
export async function spawnBundled(
  dir: string,
  args: string[],
): Promise<BundledKubelet> {
  const grants = await dryRunGrants(args);
  const bundle = await bundleInto(dir);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...grants, bundle, ...args],
    cwd: dir,
    env: CHILD_ENV,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  return { grants, child };
}

/**
 * Writes `<dir>/config.yaml` (a KubeletConfiguration of `fields`, one `key: value` line each) and
 * returns the command line that runs a kubelet on it with its root dir under `dir`.
 */
export async function writeKubeletConfig(
  dir: string,
  fields: string[],
  extraArgs: string[] = [],
): Promise<string[]> {
  await Deno.writeTextFile(
    `${dir}/config.yaml`,
    [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      ...fields,
      "",
    ].join("\n"),
  );
  return [
    "--config",
    `${dir}/config.yaml`,
    "--root-dir",
    `${dir}/root`,
    ...extraArgs,
  ];
}

/** The KubeletConfiguration lines of a bundled kubelet on a private runtime's pod network. */
export function podNetworkFields(
  dir: string,
  endpoint: string,
  podCIDR: string,
  port: number,
): string[] {
  return [
    `containerRuntimeEndpoint: ${endpoint}`,
    `staticPodPath: ${dir}/manifests`,
    `podLogsDir: ${dir}/logs`,
    `podCIDR: ${podCIDR}`,
    "fileCheckFrequency: 1s",
    "healthzPort: 0",
    "address: 127.0.0.1",
    `port: ${port}`,
  ];
}

/** The runtime calls {@linkcode finishBundled} cleans up with. */
export type SandboxCleaner = Pick<
  CriRuntime,
  "listPodSandbox" | "stopPodSandbox" | "removePodSandbox" | "close"
>;

/** A bundled kubelet's stderr as it arrives. */
export interface StderrLog {
  /** Everything read so far. */
  text(): string;
  /** Everything, once the process closed it. */
  done: Promise<string>;
}

/** Reads `child`'s piped stderr in the background. */
export function collectStderr(child: Deno.ChildProcess): StderrLog {
  let log = "";
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) log += decoder.decode(chunk);
    return log;
  })();
  return { text: () => log, done };
}

/**
 * Runs `body` against a bundled kubelet, then stops it, removes the sandboxes it left
 * (those `mine` accepts) and `dir`, and checks it never hit a permission it lacked. A
 * failure of `body` is rethrown with the kubelet's stderr tail.
 */
export async function finishBundled(
  kubelet: { child: Deno.ChildProcess; stderr: StderrLog },
  cleanup: {
    runtime: SandboxCleaner;
    dir: string;
    mine?: (sandboxName: string) => boolean;
  },
  body: () => Promise<void>,
): Promise<void> {
  const stop = async () => {
    try {
      kubelet.child.kill("SIGTERM");
    } catch { /* already stopped */ }
    await kubelet.child.status;
  };
  let failure: Error | undefined;
  try {
    await body();
  } catch (error) {
    failure = error as Error;
  }
  await stop();
  const err = await kubelet.stderr.done;
  const { runtime } = cleanup;
  const { items } = await runtime.listPodSandbox({});
  for (const s of items) {
    if (cleanup.mine && !cleanup.mine(s.metadata?.name ?? "")) continue;
    await runtime.stopPodSandbox({ podSandboxId: s.id }).catch(() => {});
    await runtime.removePodSandbox({ podSandboxId: s.id }).catch(() => {});
  }
  await runtime.close();
  await removeTree(cleanup.dir).catch(() => {});
  if (failure) {
    throw new Error(
      `${failure.message}\nkubelet stderr (tail):\n${err.slice(-4000)}`,
    );
  }
  if (/NotCapable|Requires \w+ access/.test(err)) {
    throw new Error(`the kubelet lacked a permission:\n${err.slice(-4000)}`);
  }
}

/**
 * Throws unless `grants` give the pod network `podCIDR` as a range and keep net, sys and
 * run scoped (no `--allow-all`, `--allow-run`, `--allow-ffi`, bare `--allow-net`/`-sys`).
 */
export function assertScopedPodNetworkGrants(
  grants: string[],
  podCIDR: string,
): void {
  const net = grants.find((g) => g.startsWith("--allow-net="));
  if (!net?.split(/[=,]/).includes(podCIDR)) {
    throw new Error(`the pod network ${podCIDR} is not granted: ${net}`);
  }
  const loose = grants.filter((g) =>
    /^--allow-(all|run|ffi)\b|^-A$|^--allow-(net|sys)$/.test(g)
  );
  if (loose.length > 0) throw new Error(`unscoped grants: ${loose.join(" ")}`);
}
