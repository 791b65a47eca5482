/**
 * Types shared by the permission planner, the startup check and the build
 * scripts. The planner inputs are deliberately structural and all-optional so
 * the real `KubeletConfiguration` / `KubeletFlags` objects (owned by
 * `src/config` and `src/flags`) can be passed in without this folder importing
 * them.
 * @module
 */

/**
 * The Deno permission kinds the kubelet may be granted. Never ffi/all; `run` only names
 * exact commands (credential plugins, `getsubids`).
 */
export type PermissionName = "read" | "write" | "net" | "env" | "sys" | "run";

/** All kinds in the order flags are emitted. */
export const PERMISSION_NAMES: readonly PermissionName[] = [
  "read",
  "write",
  "net",
  "env",
  "sys",
  "run",
];

/** One value of one `--allow-<name>` list plus why the kubelet needs it. */
export interface PermissionGrant {
  name: PermissionName;
  /** A path, `host:port`, `unix:<path>`, an env var name or a sys API name. */
  value: string;
  /** The config field or flag that caused it, e.g. `staticPodPath`. */
  reason: string;
}

/**
 * The exact grants a configuration needs. Each list is sorted and free of
 * duplicates, and a path already covered by a granted ancestor is dropped.
 */
export interface PermissionPlan {
  read: readonly string[];
  write: readonly string[];
  net: readonly string[];
  env: readonly string[];
  sys: readonly string[];
  /**
   * Commands the kubelet may start: a kubeconfig's exec credential plugin, image credential
   * plugins and `getsubids`, each named exactly; nothing else.
   */
  run: readonly string[];
  /** Every grant with its reason (same values as the lists). */
  grants: readonly PermissionGrant[];
}

/** A grant the running process does not hold. */
export type MissingGrant = PermissionGrant;

/** The x509 part of the config the planner reads. */
export interface PlanX509 {
  clientCAFile?: string | undefined;
}

/**
 * The `KubeletConfiguration` (v1beta1 JSON shape) fields the planner reads.
 * Missing fields take the upstream defaults.
 */
export interface PlanConfig {
  staticPodPath?: string | undefined;
  staticPodURL?: string | undefined;
  podLogsDir?: string | undefined;
  containerRuntimeEndpoint?: string | undefined;
  imageServiceEndpoint?: string | undefined;
  tlsCertFile?: string | undefined;
  tlsPrivateKeyFile?: string | undefined;
  authentication?: { x509?: PlanX509 | undefined } | undefined;
  resolvConf?: string | undefined;
  address?: string | undefined;
  port?: number | undefined;
  readOnlyPort?: number | undefined;
  healthzBindAddress?: string | undefined;
  healthzPort?: number | undefined;
  /** Pod IP range(s): httpGet/tcpSocket/grpc probes and httpGet hooks dial pod IPs. */
  podCIDR?: string | undefined;
  /** false → no kubelet API: none of its listeners, files or directories are granted. */
  enableServer?: boolean | undefined;
  /** With `enableSystemLogHandler`, the kubelet API's `/logs/` reads the node's log directory. */
  enableDebuggingHandlers?: boolean | undefined;
  enableSystemLogHandler?: boolean | undefined;
}

/** The command-line-only flags the planner reads. */
export interface PlanFlags {
  kubeconfig?: string | undefined;
  bootstrapKubeconfig?: string | undefined;
  certDir?: string | undefined;
  config?: string | undefined;
  configDir?: string | undefined;
  rootDir?: string | undefined;
  lockFile?: string | undefined;
  hostnameOverride?: string | undefined;
  imageCredentialProviderConfig?: string | undefined;
  imageCredentialProviderBinDir?: string | undefined;
}

/** What {@linkcode planPermissions} needs: the loaded config and the flags. */
export interface PlanContext {
  config: PlanConfig;
  flags: PlanFlags;
}

/** Options of {@linkcode planPermissions}. */
export interface PlanOptions {
  /**
   * Make relative paths absolute against this directory (the build scripts
   * pass the build-time working directory). Without it relative flag paths
   * stay relative, which Deno resolves against the process working dir.
   */
  cwd?: string;
  /**
   * Reads a kubeconfig to find the API server; returns undefined when it
   * cannot be read. Defaults to a synchronous `Deno.readTextFileSync`.
   */
  readFile?: (path: string) => string | undefined;
  /**
   * Lists the regular files of a directory (a credential provider config directory); returns
   * undefined when it is not a readable directory. Defaults to `Deno.readDirSync`.
   */
  listDir?: (path: string) => string[] | undefined;
  /** Extra `host:port` values to allow (e.g. an API server not readable now). */
  extraNet?: readonly string[];
  /**
   * CSI drivers the node runs: their registration and CSI sockets are granted at the paths
   * node-driver-registrar and the drivers use by convention
   * (`<root-dir>/plugins_registry/<name>-reg.sock`, `<root-dir>/plugins/<name>/csi.sock`);
   * Deno's `unix:` grant is an exact path, so sockets known only at run time cannot be.
   */
  csiDrivers?: readonly string[];
  /**
   * Device plugin socket names known in advance: each is granted in upstream's fixed folder
   * (`/var/lib/kubelet/device-plugins/<name>`); a plugin whose socket is not named is
   * refused at registration.
   */
  devicePluginSockets?: readonly string[];
  /**
   * The absolute path of `getsubids`, when the node gives the `kubelet` user subordinate IDs
   * for pod user namespaces: the kubelet may look at it and run it (upstream
   * `getKubeletMappings`). Without it the kubelet warns at start when that user exists.
   */
  getsubids?: string;
  /**
   * Host directories the node's pods name in typed hostPath volumes, subPaths inside
   * hostPaths and local PVs: read and write on each (the kubelet looks at these paths, makes
   * the `OrCreate` ones and sets their group for `fsGroup`). Not `/`, which would turn the
   * file-system sandbox off.
   */
  hostPaths?: readonly string[];
}
