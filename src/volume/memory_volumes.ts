/**
 * Keeps secret, projected and downwardAPI volumes in memory, as upstream does (their wrapped
 * emptyDir has `medium: Memory`): each volume's directory gets a tmpfs of its own before the
 * first write, so Secret data and service account tokens never reach the node's disk, and the
 * tmpfs is unmounted when the pod's volumes go. The mount itself is done by whoever may: the
 * cgroup agent for the sandboxed kubelet, the kubelet itself with every permission. Without
 * either the volumes stay on disk and a warning says why, once.
 *
 * A directory that already holds files on disk (a pod that was running before this kubelet
 * started mounting) stays on disk for that pod's life: a tmpfs over it would hide its files
 * from later writes' readers and the running containers would no longer see updates.
 *
 * @module
 */

import { statfs } from "node:fs/promises";
import type { Pod } from "../api/mod.ts";
import type { Logger } from "../log/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import { podVolumeDirectory, podVolumesDirectory } from "./volume_paths.ts";
import { pathExists } from "../util/path_exists.ts";

/** A pod volume's directory, by its parts (`plugin` is the escaped plugin name). */
export interface TmpfsVolume {
  uid: string;
  plugin: string;
  name: string;
}

/** Whoever can mount a tmpfs on a pod volume's directory. */
export interface VolumeTmpfs {
  /** Mounts a tmpfs there (0: no size option); nothing when one is there already. */
  mountVolumeTmpfs(target: TmpfsVolume, sizeBytes: number): Promise<void>;
  /** Unmounts it; false when none was mounted there. */
  unmountVolumeTmpfs(target: TmpfsVolume): Promise<boolean>;
}

/** The mounter, or why there is none (named in the warning). */
export type TmpfsAccess = { tmpfs: VolumeTmpfs } | { reason: string };

/**
 * Escaped plugin names whose volumes are memory-backed upstream (configMap is not; an emptyDir
 * only with `medium: Memory`, which its caller decides).
 */
export const MEMORY_BACKED_PLUGINS: readonly string[] = [
  "kubernetes.io~secret",
  "kubernetes.io~projected",
  "kubernetes.io~downward-api",
  "kubernetes.io~empty-dir",
];

const TMPFS_MAGIC = 0x01021994;
const RAMFS_MAGIC = 0x858458f6;

/** Memory-backed volume directories of the node's pods. */
export interface MemoryVolumes {
  /**
   * Makes the volume's directory (a tmpfs when it can be) before its files are written; never
   * rejects for a mount that cannot be made (the volume stays on disk, with a warning).
   * `sizeLimitBytes` is an emptyDir's `sizeLimit` (upstream sizes its tmpfs by it when lower).
   */
  prepare(
    pod: Pod,
    plugin: string,
    name: string,
    sizeLimitBytes?: number,
  ): Promise<string>;
  /** Unmounts the tmpfs of the pod's volumes, before their directories are removed. */
  release(uid: string): Promise<void>;
}

/** Options of {@linkcode createMemoryVolumes}. */
export interface MemoryVolumesOptions {
  rootDir: string;
  access: TmpfsAccess;
  /**
   * The tmpfs size for a pod (upstream `calculateEmptyDirMemorySize`: the pod's memory limit
   * when set and below node allocatable memory, else node allocatable memory; 0 when unknown).
   */
  sizeFor: (pod: Pod) => number;
}

/** Dependencies of {@linkcode createMemoryVolumes}. */
export interface MemoryVolumesDeps {
  logger: Logger;
  /** The file system type of a path (default: `statfs`). */
  fsType?: (path: string) => Promise<number>;
}

async function isEmptyDir(path: string): Promise<boolean> {
  for await (const _ of Deno.readDir(path)) return false;
  return true;
}

/** Creates the node's {@linkcode MemoryVolumes}. */
export function createMemoryVolumes(
  deps: MemoryVolumesDeps,
  options: MemoryVolumesOptions,
): MemoryVolumes {
  const fsType = deps.fsType ??
    (async (path: string) => (await statfs(path)).type);
  const inMemory = async (path: string) => {
    const type = await fsType(path);
    return type === TMPFS_MAGIC || type === RAMFS_MAGIC;
  };
  const warned = new Set<string>();
  const onDisk = new Set<string>();
  const warnOnce = (text: string, fields: Record<string, string>) => {
    const key = `${text}\0${JSON.stringify(fields)}`;
    if (warned.has(key)) return;
    warned.add(key);
    deps.logger.warn(text, fields);
  };
  const access = options.access;
  return {
    async prepare(pod, plugin, name, sizeLimitBytes) {
      const uid = pod.metadata.uid ?? "";
      const dir = podVolumeDirectory(options.rootDir, uid, {
        plugin: plugin.replaceAll("~", "/"),
        name,
      });
      const existed = await pathExists(dir);
      await Deno.mkdir(dir, { recursive: true, mode: 0o755 });
      if (!MEMORY_BACKED_PLUGINS.includes(plugin)) return dir;
      if (await inMemory(dir)) return dir;
      if ("reason" in access) {
        warnOnce(
          "Secret, projected and downwardAPI volumes are written to the node's disk and Memory emptyDirs share one directory of /run, not a tmpfs each as upstream keeps them: the kubelet can mount neither itself nor through the cgroup agent; run the agent (docs/volumes.md, docs/permissions.md)",
          { reason: access.reason },
        );
        return dir;
      }
      if (existed && !(await isEmptyDir(dir))) {
        if (!onDisk.has(dir)) {
          onDisk.add(dir);
          deps.logger.info(
            "A memory-backed volume already written to disk stays there for its pod's life",
            { pod: uid, volume: name, path: dir },
          );
        }
        return dir;
      }
      try {
        await access.tmpfs.mountVolumeTmpfs(
          { uid, plugin, name },
          emptyDirMemorySize(options.sizeFor(pod), sizeLimitBytes),
        );
      } catch (error) {
        warnOnce(
          "Cannot mount a tmpfs for a memory-backed volume: it is written to the node's disk",
          { pod: uid, volume: name, err: errorMessage(error) },
        );
      }
      return dir;
    },
    async release(uid) {
      if (uid === "" || "reason" in access) return;
      const volumes = podVolumesDirectory(options.rootDir, uid);
      for (const plugin of MEMORY_BACKED_PLUGINS) {
        let names: string[];
        try {
          names = (await Array.fromAsync(Deno.readDir(`${volumes}/${plugin}`)))
            .filter((e) => e.isDirectory).map((e) => e.name);
        } catch {
          continue; // no volume of this kind
        }
        for (const name of names) {
          try {
            if (!(await inMemory(`${volumes}/${plugin}/${name}`))) continue;
            await access.tmpfs.unmountVolumeTmpfs({ uid, plugin, name });
          } catch (error) {
            deps.logger.warn("Cannot unmount a memory-backed volume", {
              pod: uid,
              volume: name,
              err: errorMessage(error),
            });
          }
        }
      }
    },
  };
}

/** Upstream's tmpfs size for a pod's memory-backed volume (see {@linkcode MemoryVolumesOptions}). */
export function memoryVolumeSize(
  nodeMemoryBytes: number | undefined,
  podMemoryLimitBytes: number | undefined,
): number {
  const node = nodeMemoryBytes ?? 0;
  const pod = podMemoryLimitBytes ?? 0;
  if (pod > 0 && (node === 0 || pod <= node)) return pod;
  return node;
}

/**
 * Upstream `calculateEmptyDirMemorySize` for an emptyDir: its `sizeLimit` (bytes, rounded up)
 * when above zero and not above the pod's size, else the pod's size.
 */
export function emptyDirMemorySize(
  podSizeBytes: number,
  sizeLimitBytes: number | undefined,
): number {
  if (sizeLimitBytes === undefined || sizeLimitBytes <= 0) return podSizeBytes;
  const limit = Math.ceil(sizeLimitBytes);
  return podSizeBytes === 0 || limit <= podSizeBytes ? limit : podSizeBytes;
}
