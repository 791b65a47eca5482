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
