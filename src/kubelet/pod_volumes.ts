/**
 * What each pod's volumes use, for `/stats/summary`'s pod `volume` list: upstream asks each
 * mounted volume's metrics provider, and the plugins that have one on a node without CSI
 * (emptyDir, configMap, secret, projected, downwardAPI) measure the volume's directory (`du`,
 * inode count) and `statfs` it. Volumes are found under `<root-dir>/pods/<uid>/volumes`.
 * Those upstream counts in the pod's ephemeral storage (`IsLocalEphemeralVolume`: an emptyDir
 * on the node's disk, a configMap) are told by their plugin and by their directory being on
 * the root dir's device (a memory-backed emptyDir is a tmpfs of its own).
 *
 * @module
 */

import { directoryUsage } from "../util/directory_size.ts";
import type { FsFigures, VolumeUsage } from "../server/mod.ts";

/** The volume plugin directories whose volumes upstream measures. */
const MEASURED_PLUGINS = new Set([
  "kubernetes.io~empty-dir",
  "kubernetes.io~configmap",
  "kubernetes.io~secret",
  "kubernetes.io~projected",
  "kubernetes.io~downward-api",
]);

/** The plugin directories of volumes on the node's disk that count as ephemeral storage. */
const LOCAL_EPHEMERAL_PLUGINS = new Set([
  "kubernetes.io~empty-dir",
  "kubernetes.io~configmap",
]);

/** Whether a volume under this plugin directory has usage figures. */
export function measuredPlugin(dir: string): boolean {
  return MEASURED_PLUGINS.has(dir);
}

/** The reads of the pod volume walk. */
export interface PodVolumesFs {
  readDirNames(path: string): Promise<string[]>;
  usage(path: string): Promise<{ bytes: number; inodes: number }>;
  statfs(path: string): Promise<FsFigures | undefined>;
  /** The device number of the filesystem holding `path`. */
  device(path: string): Promise<number>;
}

async function dirNames(path: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(path)) {
      if (e.isDirectory) names.push(e.name);
    }
  } catch {
    // missing or unreadable: none
  }
  return names.sort();
}

/** The walk on the host. */
export function podVolumesFs(
  statfs: (path: string) => Promise<FsFigures | undefined>,
): PodVolumesFs {
  return {
    readDirNames: dirNames,
    // A volume counts its own directory, as upstream's `du` of the volume path does.
    usage: (path) => directoryUsage(path, { self: true }),
    statfs,
    device: async (path) => (await Deno.stat(path)).dev,
  };
}

/**
 * Each listed pod's measured volumes now, by pod UID; a volume whose directory cannot be
 * measured is left out.
 */
export async function readPodVolumes(
  fs: PodVolumesFs,
  rootDir: string,
  uids: readonly string[],
  now: () => number,
): Promise<Map<string, VolumeUsage[]>> {
  const out = new Map<string, VolumeUsage[]>();
  const rootDevice = await fs.device(rootDir).catch(() => undefined);
  await Promise.all(uids.map(async (uid) => {
    const base = `${rootDir.replace(/\/+$/, "")}/pods/${uid}/volumes`;
    const volumes: VolumeUsage[] = [];
    for (const plugin of await fs.readDirNames(base)) {
      if (!measuredPlugin(plugin)) continue;
      for (const name of await fs.readDirNames(`${base}/${plugin}`)) {
        const path = `${base}/${plugin}/${name}`;
        try {
          const [used, figures, device] = await Promise.all([
            fs.usage(path),
            fs.statfs(path),
            fs.device(path).catch(() => undefined),
          ]);
          volumes.push({
            name,
            timeMs: now(),
            usedBytes: used.bytes,
            inodesUsed: used.inodes,
            ...(figures ? { fs: figures } : {}),
            ...(LOCAL_EPHEMERAL_PLUGINS.has(plugin) && device !== undefined &&
                device === rootDevice
              ? { localEphemeral: true }
              : {}),
          });
        } catch {
          // unreadable: left out
        }
      }
    }
    if (volumes.length) out.set(uid, volumes);
  }));
  return out;
}
