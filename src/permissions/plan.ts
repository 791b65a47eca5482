/**
 * The permission planner: a pure decision from (config, flags) to the exact
 * `--allow-*` lists the kubelet needs. No file is touched except the
 * kubeconfig(s), read (when readable) to learn the API server address.
 * @module
 */
import { clean, dir, isAbs, join } from "../util/posix_path.ts";
import { DEFAULT_MEMORY_VOLUME_DIR } from "../volume/mod.ts";
import {
  credentialPluginPath,
  readCredentialProviderConfig,
} from "../pod/mod.ts";
import { podNetworkGrants } from "./cidr.ts";
import { PermissionPlanError } from "./errors.ts";
import { kubeconfigNeeds } from "./kubeconfig.ts";
import {
  PERMISSION_NAMES,
  type PermissionGrant,
  type PermissionName,
  type PermissionPlan,
  type PlanConfig,
  type PlanContext,
  type PlanFlags,
  type PlanOptions,
} from "./types.ts";

/** Upstream's fixed device plugin folder (`pluginapi.DevicePluginPath`). */
const DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins";

/** Upstream defaults for the fields the planner reads. */
export const PLAN_DEFAULTS = {
  rootDir: "/var/lib/kubelet",
  podLogsDir: "/var/log/pods",
  containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
  resolvConf: "/etc/resolv.conf",
  address: "0.0.0.0",
  port: 10250,
  readOnlyPort: 0,
  healthzBindAddress: "127.0.0.1",
  healthzPort: 10248,
  /** Memory-backed emptyDirs. */
  memoryVolumeDir: DEFAULT_MEMORY_VOLUME_DIR,
} as const;

/**
 * Host-information APIs the kubelet may call, with why. Everything else
 * (`osUptime`, `uid`, `cpus`, `homedir`, ...) stays denied. Which of these a
 * plan grants depends on the flags, see {@linkcode sysNamesFor}.
 */
export const KUBELET_SYS_NAMES: Readonly<Record<string, string>> = {
  hostname: "node name defaults to the hostname (no --hostname-override)",
  osRelease:
    "the kernel version: which safe sysctls pods may set, node status nodeInfo.kernelVersion",
  networkInterfaces: "node status addresses (API server mode)",
  systemMemoryInfo: "memory capacity and the memory.available eviction signal",
  statfs: "nodefs/imagefs capacity and eviction signals",
};

/**
 * The sys names a configuration needs: `hostname` only without
 * `--hostname-override`; `networkInterfaces` only when the kubelet reports
 * node status to an API server (a kubeconfig is set); `systemMemoryInfo`/
 * `statfs` (eviction signals) and `osRelease` (the safe sysctl list) always.
 */
export function sysNamesFor(flags: PlanFlags): string[] {
  const names = ["systemMemoryInfo", "statfs", "osRelease"];
  if (!flags.hostnameOverride?.trim()) names.push("hostname");
  if (flags.kubeconfig || flags.bootstrapKubeconfig) {
    names.push("networkInterfaces");
  }
  return names;
}

/**
 * Environment variables read by code bundled into the kubelet, with why. The
 * kubelet itself takes its settings from flags and the config file only;
 * these are debug switches of npm dependencies that Deno's node compat layer
 * gates like any other variable (an ungranted read throws NotCapable).
 */
export const KUBELET_ENV_NAMES: Readonly<Record<string, string>> = {
  BUF_BIGINT_DISABLE: "@bufbuild/protobuf reads it when loaded (CRI client)",
  LOG_STREAM: "yaml parser debug switch (config and manifests)",
  LOG_TOKENS: "yaml parser debug switch (config and manifests)",
};

/** The standard (kubeadm) node layout the default binary is built for. */
export const STANDARD_LAYOUT: PlanContext = {
  flags: {
    rootDir: "/var/lib/kubelet",
    config: "/var/lib/kubelet/config.yaml",
    kubeconfig: "/etc/kubernetes/kubelet.conf",
    bootstrapKubeconfig: "/etc/kubernetes/bootstrap-kubelet.conf",
  },
  config: {
    staticPodPath: "/etc/kubernetes/manifests",
    podLogsDir: "/var/log/pods",
    containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
    authentication: { x509: { clientCAFile: "/etc/kubernetes/pki/ca.crt" } },
    resolvConf: "/etc/resolv.conf",
    address: "0.0.0.0",
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: 10248,
  },
};

function coveredBy(parent: string, child: string): boolean {
  if (parent === child || parent === "/") return true;
  return child.startsWith(parent.endsWith("/") ? parent : parent + "/");
}

/** Drops paths that a granted ancestor in the same list already covers. */
function prunePaths(paths: string[]): string[] {
  const sorted = [...new Set(paths)].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const path of sorted) {
    if (!kept.some((parent) => coveredBy(parent, path))) kept.push(path);
  }
  return kept.sort();
}

class PlanBuilder {
  #grants: PermissionGrant[] = [];
  #cwd: string | undefined;

  constructor(cwd: string | undefined) {
    this.#cwd = cwd;
  }

  /** Normalises a path; `base` resolves relative config-file paths. */
  path(value: string, base?: string): string {
    let path = value;
    if (!isAbs(path)) {
      if (base !== undefined) path = join(base, path);
      if (!isAbs(path) && this.#cwd !== undefined) {
        path = join(this.#cwd, path);
      }
    }
    return clean(path);
  }

  add(name: PermissionName, value: string, reason: string): void {
    this.#grants.push({ name, value, reason });
  }

  build(): PermissionPlan {
    const lists = new Map<PermissionName, string[]>();
    for (const name of PERMISSION_NAMES) {
      const values = this.#grants.filter((g) => g.name === name).map((g) =>
        g.value
      );
      lists.set(
        name,
        name === "read" || name === "write"
          ? prunePaths(values)
          : [...new Set(values)].sort(),
      );
    }
    const seen = new Set<string>();
    const grants = this.#grants.filter((g) => {
      const key = `${g.name}\0${g.value}`;
      if (seen.has(key) || !lists.get(g.name)?.includes(g.value)) return false;
      seen.add(key);
      return true;
    });
    return {
      read: lists.get("read") ?? [],
      write: lists.get("write") ?? [],
      net: lists.get("net") ?? [],
      env: lists.get("env") ?? [],
      sys: lists.get("sys") ?? [],
      run: lists.get("run") ?? [],
      grants,
    };
  }
}

/** `host:port` in Deno's syntax (IPv6 literals get brackets). */
export function hostPort(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return bare.includes(":") ? `[${bare}]:${port}` : `${bare}:${port}`;
}

function addEndpoint(b: PlanBuilder, endpoint: string, field: string): void {
  if (endpoint.startsWith("sim://")) return; // simulated runtime: in-process
  let socket: string;
  if (endpoint.startsWith("unix://")) {
    socket = endpoint.slice("unix://".length);
  } else if (endpoint.startsWith("unix:/")) {
    socket = endpoint.slice("unix:".length);
  } else if (endpoint.startsWith("/")) {
    socket = endpoint; // upstream still accepts a bare socket path
  } else {
    throw new PermissionPlanError(
      field,
      `"${endpoint}" is not a "unix://" or "sim://" endpoint; use e.g. "unix:///run/containerd/containerd.sock"`,
    );
  }
  if (socket === "" || socket.startsWith("@") || !socket.startsWith("/")) {
    throw new PermissionPlanError(
      field,
      `"${endpoint}" must name an absolute socket path (abstract and relative sockets cannot be granted)`,
    );
  }
  b.add("read", socket, field);
  b.add("write", socket, field);
  b.add("net", `unix:${socket}`, field);
  // Deno also checks the request URL's host although the bytes go to the
  // socket; the CRI client uses a reserved name that never resolves
  // (runtime's CRI_URL_HOST; tests/ship/cri_grant_test.ts keeps them equal).
  b.add("net", CRI_URL_GRANT, field);
}

/** The net grant for the runtime's streaming server: every port of the loopback address. */
export const STREAMING_SERVER_GRANT = "127.0.0.1";
/** Upstream's legacy container log link directory (for every `podLogsDir`). */
export const CONTAINER_LOG_LINKS_DIR = "/var/log/containers";

/** The node's log directory the kubelet API serves under `/logs/` (upstream's fixed path). */
export const NODE_LOG_DIR = "/var/log";

/** The net grant for the CRI client's request URL host. */
export const CRI_URL_GRANT = "cri.invalid:80";

function addListener(
  b: PlanBuilder,
  address: string,
  port: number,
  field: string,
): void {
  if (port > 0) b.add("net", hostPort(address, port), field);
}

async function addKubeconfig(
  b: PlanBuilder,
  path: string,
  field: string,
  readFile: (path: string) => string | undefined,
): Promise<void> {
  b.add("read", path, field);
  const text = readFile(path);
  if (text === undefined) return;
  const needs = await kubeconfigNeeds(text, path);
  for (const server of needs.servers) b.add("net", server, `${field} server`);
  for (const file of needs.files) {
    b.add("read", b.path(file), `${field} credentials`);
  }
  for (const command of needs.commands) {
    b.add(
      "run",
      command.includes("/") ? b.path(command) : command,
      `${field} exec credential plugin`,
    );
  }
}

function defaultReadFile(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

function defaultListDir(path: string): string[] | undefined {
  try {
    return [...Deno.readDirSync(path)].filter((e) => e.isFile).map((e) =>
      e.name
    );
  } catch {
    return undefined;
  }
}

/**
 * The node's docker config files outside the root dir, and the image credential plugins: the
 * config (file or directory) is read, the bin dir inspected, each named plugin run.
 */
async function addRegistryLogins(
  b: PlanBuilder,
  flags: PlanFlags,
  readFile: (path: string) => string | undefined,
  listDir: (path: string) => string[] | undefined,
): Promise<void> {
  b.add("read", "/.docker/config.json", "node registry logins");
  b.add("read", "/.dockercfg", "node registry logins");
  const configFlag = "--image-credential-provider-config";
  const binFlag = "--image-credential-provider-bin-dir";
  if (flags.imageCredentialProviderConfig) {
    b.add("read", b.path(flags.imageCredentialProviderConfig), configFlag);
  }
  if (!flags.imageCredentialProviderBinDir) return;
  const binDir = b.path(flags.imageCredentialProviderBinDir);
  b.add("read", binDir, binFlag);
  if (!flags.imageCredentialProviderConfig) return;
  const providers = await readCredentialProviderConfig(
    b.path(flags.imageCredentialProviderConfig),
    {
      isDirectory: (path) => Promise.resolve(listDir(path) !== undefined),
      listFiles: (path) => Promise.resolve(listDir(path) ?? []),
      readText: (path) => {
        const text = readFile(path);
        return text === undefined
          ? Promise.reject(new Error("unreadable"))
          : Promise.resolve(text);
      },
    },
  ).catch(() => []); // an unreadable or wrong config: the kubelet refuses it at start
  for (const { name } of providers) {
    b.add("run", credentialPluginPath(binDir, name), `${binFlag} plugin`);
  }
}

async function addFlags(
  b: PlanBuilder,
  flags: PlanFlags,
  readFile: (path: string) => string | undefined,
  listDir: (path: string) => string[] | undefined,
): Promise<void> {
  const rootDir = b.path(flags.rootDir || PLAN_DEFAULTS.rootDir);
  b.add("read", rootDir, "--root-dir");
  b.add("write", rootDir, "--root-dir");
  await addRegistryLogins(b, flags, readFile, listDir);
  // emptyDir medium Memory: a directory on the host's /run tmpfs (no mount without --allow-run)
  b.add("read", PLAN_DEFAULTS.memoryVolumeDir, "emptyDir medium: Memory");
  b.add("write", PLAN_DEFAULTS.memoryVolumeDir, "emptyDir medium: Memory");
  if (flags.config) b.add("read", b.path(flags.config), "--config");
  if (flags.configDir) b.add("read", b.path(flags.configDir), "--config-dir");
  if (flags.certDir) {
    b.add("read", b.path(flags.certDir), "--cert-dir");
    b.add("write", b.path(flags.certDir), "--cert-dir");
  }
  if (flags.lockFile) {
    b.add("read", b.path(flags.lockFile), "--lock-file");
    b.add("write", b.path(flags.lockFile), "--lock-file");
  }
  if (flags.kubeconfig) {
    const path = b.path(flags.kubeconfig);
    await addKubeconfig(b, path, "--kubeconfig", readFile);
    // TLS bootstrap writes the real kubeconfig once the CSR is approved, through
    // "<kubeconfig>.tmp" renamed into place.
    if (flags.bootstrapKubeconfig) {
      b.add("write", path, "--kubeconfig");
      b.add("write", `${path}.tmp`, "--kubeconfig");
      b.add("read", `${path}.tmp`, "--kubeconfig"); // rename needs both
    }
  }
  if (flags.kubeconfig || flags.bootstrapKubeconfig) {
    // Node status nodeInfo: machineID and osImage (API server mode).
    b.add("read", "/etc/machine-id", "node status");
    b.add("read", "/etc/os-release", "node status");
  }
  if (flags.bootstrapKubeconfig) {
    const path = b.path(flags.bootstrapKubeconfig);
    await addKubeconfig(b, path, "--bootstrap-kubeconfig", readFile);
  }
}

function addConfig(b: PlanBuilder, config: PlanConfig, base?: string): void {
  const file = (value: string | undefined, field: string) => {
    if (value) b.add("read", b.path(value, base), field);
  };
  // The kubelet API (enableServer, upstream's `if s.EnableServer` around both listeners): its
  // listeners, serving pair, client CA, /logs/ and the streaming proxy are granted only with it.
  const server = config.enableServer !== false;
  const apiPort = server ? config.port ?? PLAN_DEFAULTS.port : 0;
  file(config.staticPodPath, "staticPodPath");
  if (server) {
    file(config.tlsCertFile, "tlsCertFile");
    file(config.tlsPrivateKeyFile, "tlsPrivateKeyFile");
    file(
      config.authentication?.x509?.clientCAFile,
      "authentication.x509.clientCAFile",
    );
  }
  file(config.resolvConf ?? PLAN_DEFAULTS.resolvConf, "resolvConf");
  // host-network pods get a copy of the node's hosts file (upstream ensureHostsFile)
  b.add("read", "/etc/hosts", "host-network pods' /etc/hosts");
  const logs = b.path(config.podLogsDir || PLAN_DEFAULTS.podLogsDir, base);
  b.add("read", logs, "podLogsDir");
  b.add("write", logs, "podLogsDir");
  // the legacy container log links (hard links under these scoped grants), in upstream's
  // fixed directory whatever podLogsDir is (src/pod/logs/container_logs.ts)
  b.add("read", CONTAINER_LOG_LINKS_DIR, "container log links");
  b.add("write", CONTAINER_LOG_LINKS_DIR, "container log links");
  // the kubelet API's /logs/ (a debugging handler, on by default) lists and reads it
  if (
    apiPort > 0 &&
    config.enableDebuggingHandlers !== false &&
    config.enableSystemLogHandler !== false
  ) {
    b.add("read", NODE_LOG_DIR, "enableSystemLogHandler");
  }

  const runtime = config.containerRuntimeEndpoint ||
    PLAN_DEFAULTS.containerRuntimeEndpoint;
  addEndpoint(b, runtime, "containerRuntimeEndpoint");
  if (config.imageServiceEndpoint) {
    addEndpoint(b, config.imageServiceEndpoint, "imageServiceEndpoint");
  }
  if (
    !runtime.startsWith("sim://") && apiPort > 0
  ) {
    // exec, attach and port-forward are proxied to the runtime's streaming server, which
    // containerd binds to 127.0.0.1 on a port it picks at each start (stream_server_port "0")
    b.add(
      "net",
      STREAMING_SERVER_GRANT,
      "containerRuntimeEndpoint streaming server",
    );
  }
  if (config.staticPodURL) {
    let url: URL;
    try {
      url = new URL(config.staticPodURL);
    } catch (cause) {
      throw new PermissionPlanError(
        "staticPodURL",
        `"${config.staticPodURL}" is not a URL; use e.g. "http://host:8080/pods"`,
        { cause },
      );
    }
    const port = url.port !== ""
      ? Number(url.port)
      : (url.protocol === "https:" ? 443 : 80);
    b.add("net", hostPort(url.hostname, port), "staticPodURL");
  }

  // probes and httpGet hooks connect to pod IPs; Deno scopes IPv4 ranges, so the
  // grant is the pod network itself, not every host
  for (const range of podNetworkGrants(config.podCIDR)) {
    b.add("net", range, "podCIDR (pod IPs for probes and httpGet hooks)");
  }

  const address = config.address || PLAN_DEFAULTS.address;
  addListener(b, address, apiPort, "port");
  addListener(
    b,
    address,
    server ? config.readOnlyPort ?? PLAN_DEFAULTS.readOnlyPort : 0,
    "readOnlyPort",
  );
  addListener(
    b,
    config.healthzBindAddress || PLAN_DEFAULTS.healthzBindAddress,
    config.healthzPort ?? PLAN_DEFAULTS.healthzPort,
    "healthzPort",
  );
}

/**
 * Computes the exact read/write/net/env/sys grants a config + flags need.
 * Relative paths in the config file are resolved against the config file's
 * directory, as upstream does; sockets are kept exactly as configured
 * (Deno's `unix:` rule is an exact match).
 * @throws {PermissionPlanError} for an endpoint/URL that cannot be granted.
 */
export async function planPermissions(
  ctx: PlanContext,
  options: PlanOptions = {},
): Promise<PermissionPlan> {
  const b = new PlanBuilder(options.cwd);
  const readFile = options.readFile ?? defaultReadFile;
  await addFlags(
    b,
    ctx.flags,
    readFile,
    options.listDir ?? defaultListDir,
  );
  const base = ctx.flags.config ? dir(b.path(ctx.flags.config)) : undefined;
  addConfig(b, ctx.config, base);
  const runtime = ctx.config.containerRuntimeEndpoint ||
    PLAN_DEFAULTS.containerRuntimeEndpoint;
  if (!runtime.startsWith("sim://")) {
    // the cgroup agent's socket (src/cgroup_agent), under the root dir's read+write grant:
    // Deno's unix connect also checks net
    const rootDir = b.path(ctx.flags.rootDir || PLAN_DEFAULTS.rootDir);
    b.add("net", `unix:${rootDir}/cgroup-agent.sock`, "cgroup agent");
    // the device manager's folder and Registration server, at upstream's fixed path
    // whatever --root-dir is; the plugins' own sockets are named at run time and cannot
    // be listed (Deno's unix: rule is an exact path)
    if (rootDir !== PLAN_DEFAULTS.rootDir) {
      b.add("read", DEVICE_PLUGIN_DIR, "device plugins");
      b.add("write", DEVICE_PLUGIN_DIR, "device plugins");
    }
    b.add(
      "net",
      `unix:${DEVICE_PLUGIN_DIR}/kubelet.sock`,
      "device plugin registration",
    );
  }
  for (const net of options.extraNet ?? []) b.add("net", net, "--api-server");
  const csiRoot = b.path(ctx.flags.rootDir || PLAN_DEFAULTS.rootDir);
  for (const driver of options.csiDrivers ?? []) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(driver)) {
      throw new PermissionPlanError(
        "--csi-driver",
        `"${driver}" is not a CSI driver name (letters, digits, ".", "_" and "-")`,
      );
    }
    // read and write come with the root dir; Deno's unix connect also checks net
    b.add(
      "net",
      `unix:${csiRoot}/plugins_registry/${driver}-reg.sock`,
      "--csi-driver",
    );
    b.add("net", `unix:${csiRoot}/plugins/${driver}/csi.sock`, "--csi-driver");
    // the gRPC client's request host, as for the CRI socket
    b.add("net", CRI_URL_GRANT, "--csi-driver");
  }
  for (const socket of options.devicePluginSockets ?? []) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(socket)) {
      throw new PermissionPlanError(
        "--device-plugin-socket",
        `"${socket}" is not a socket file name in ${DEVICE_PLUGIN_DIR} (letters, digits, ".", "_" and "-")`,
      );
    }
    // read and write come with the folder's grant; Deno's unix connect also checks net
    b.add(
      "net",
      `unix:${DEVICE_PLUGIN_DIR}/${socket}`,
      "--device-plugin-socket",
    );
  }
  // the kubelet user's subordinate IDs for pod user namespaces (upstream getKubeletMappings):
  // the user is looked up in the passwd file, then getsubids is run when the build names it
  b.add("read", "/etc/passwd", "user namespaces (the kubelet user)");
  if (options.getsubids !== undefined) {
    if (
      !isAbs(options.getsubids) ||
      clean(options.getsubids) !== options.getsubids
    ) {
      throw new PermissionPlanError(
        "--getsubids",
        `"${options.getsubids}" is not a clean absolute path; use e.g. /usr/bin/getsubids`,
      );
    }
    b.add("read", options.getsubids, "--getsubids");
    b.add("run", options.getsubids, "--getsubids");
  }
  for (const dir of options.hostPaths ?? []) {
    if (!isAbs(dir) || clean(dir) !== dir || dir === "/") {
      throw new PermissionPlanError(
        "--host-path",
        `"${dir}" is not a clean absolute directory other than "/"; name the directory your pods' host paths are in, e.g. /mnt/disks (a kubelet that must reach any path runs with every permission)`,
      );
    }
    b.add("read", dir, "--host-path");
    b.add("write", dir, "--host-path");
  }
  for (const [name, why] of Object.entries(KUBELET_ENV_NAMES)) {
    b.add("env", name, why);
  }
  for (const name of sysNamesFor(ctx.flags)) {
    b.add("sys", name, KUBELET_SYS_NAMES[name] ?? name);
  }
  return b.build();
}

/** The plan for {@linkcode STANDARD_LAYOUT}, the default binary's lists. */
export function standardPlan(
  options: PlanOptions = {},
): Promise<PermissionPlan> {
  return planPermissions(STANDARD_LAYOUT, {
    readFile: () => undefined,
    ...options,
  });
}
