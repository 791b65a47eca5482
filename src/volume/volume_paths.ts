/**
 * Where a pod's volumes live on the node, laid out as the upstream kubelet does:
 * `<rootDir>/pods/<uid>/volumes/<plugin with / as ~>/<volume name>`, e.g.
 * `kubernetes.io~empty-dir/cache`.
 *
 * @module
 */

/** Upstream plugin names of the sources this kubelet sets up on disk. */
export const PLUGIN_NAMES = {
  emptyDir: "kubernetes.io/empty-dir",
  downwardAPI: "kubernetes.io/downward-api",
  projected: "kubernetes.io/projected",
} as const;

function trimSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, "") : path;
}

/** `<rootDir>/pods/<uid>`. */
export function podDirectory(rootDir: string, podUid: string): string {
  return `${trimSlash(rootDir)}/pods/${podUid}`;
}

/** `<rootDir>/pods/<uid>/volumes`. */
export function podVolumesDirectory(rootDir: string, podUid: string): string {
  return `${podDirectory(rootDir, podUid)}/volumes`;
}

/** Upstream `EscapeQualifiedName`: a plugin name as a directory name. */
export function escapePluginName(plugin: string): string {
  return plugin.replaceAll("/", "~");
}

/** `<rootDir>/pods/<uid>/volumes/<plugin>/<name>`. */
export function podVolumeDirectory(
  rootDir: string,
  podUid: string,
  volume: { plugin: string; name: string },
): string {
  return `${podVolumesDirectory(rootDir, podUid)}/${
    escapePluginName(volume.plugin)
  }/${volume.name}`;
}

/** Memory-backed emptyDir of a pod: `<memoryDir>/<uid>/<name>`. */
export function memoryVolumeDirectory(
  memoryDir: string,
  podUid: string,
  name: string,
): string {
  return `${trimSlash(memoryDir)}/${podUid}/${name}`;
}

/** Where pods' memory-backed emptyDirs live on a node whose kubelet uses the default root dir. */
export const DEFAULT_MEMORY_VOLUME_DIR = "/run/kubelet.ts/memory";

/** Prefix of the memory directory of a kubelet with another root dir (never a pod UID's). */
export const MEMORY_DIR_ROOT_PREFIX = "root-";

/**
 * The memory-backed emptyDir directory of the kubelet whose `--root-dir` is `rootDir`: the
 * default directory for the default root dir, else a subdirectory named for the root dir, so
 * that kubelets sharing a host (simulated nodes, tests) never take each other's pod
 * directories for orphans.
 */
export function memoryVolumeDirFor(rootDir: string): string {
  const root = trimSlash(rootDir) || "/";
  if (root === "/var/lib/kubelet") return DEFAULT_MEMORY_VOLUME_DIR;
  // FNV-1a, 64 bit: a stable short name, not a secret
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(root)) {
    h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `${DEFAULT_MEMORY_VOLUME_DIR}/${MEMORY_DIR_ROOT_PREFIX}${
    h.toString(16).padStart(16, "0")
  }`;
}
