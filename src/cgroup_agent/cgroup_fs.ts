/**
 * The file operations on a cgroup file system, on the host or (the kubelet without every
 * permission) through the cgroup agent, and the process listing both the kubelet and the
 * agent use. Kept apart from the settings code so the agent loads only this.
 *
 * @module
 */

import { statfs } from "node:fs/promises";

/** A filesystem's size and free space (statfs) and its device number (stat). */
export interface FilesystemFigures {
  capacityBytes: number;
  availableBytes: number;
  inodes: number;
  inodesFree: number;
  device: number;
}

/** statfs of the filesystem holding `path` and stat's device number (every permission). */
export async function readFilesystemFigures(
  path: string,
): Promise<FilesystemFigures> {
  const s = await statfs(path);
  const info = await Deno.stat(path);
  return {
    capacityBytes: Number(s.blocks) * Number(s.bsize),
    availableBytes: Number(s.bavail) * Number(s.bsize),
    inodes: Number(s.files),
    inodesFree: Number(s.ffree),
    device: info.dev,
  };
}

/** The file operations the executor needs. */
export interface CgroupTreeFs {
  exists(path: string): Promise<boolean>;
  /** Names of the subdirectories (missing directory → none). */
  readDirNames(path: string): Promise<string[]>;
  /** Creates a directory and its missing parents. */
  mkdirs(path: string): Promise<void>;
  readTextFile(path: string): Promise<string>;
  writeTextFile(path: string, text: string): Promise<void>;
  /** Removes an empty directory; rejects with `Deno.errors.NotFound` when absent. */
  rmdir(path: string): Promise<void>;
}

/** {@linkcode CgroupTreeFs} on the host. */
export const denoCgroupTreeFs: CgroupTreeFs = {
  async exists(path) {
    try {
      await Deno.stat(path);
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  },
  async readDirNames(path) {
    const names: string[] = [];
    try {
      for await (const e of Deno.readDir(path)) {
        if (e.isDirectory) names.push(e.name);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return names;
  },
  mkdirs: (path) => Deno.mkdir(path, { recursive: true }),
  readTextFile: (path) => Deno.readTextFile(path),
  writeTextFile: (path, text) => Deno.writeTextFile(path, text),
  rmdir: (path) => Deno.remove(path),
};

/** Pids in `cgroup.procs` of each directory and every directory below it; duplicates removed. */
export async function readProcsBelow(
  fs: CgroupTreeFs,
  dirs: readonly string[],
): Promise<number[]> {
  const pids = new Set<number>();
  const walk = async (dir: string): Promise<void> => {
    const text = await fs.readTextFile(`${dir}/cgroup.procs`).catch(() => "");
    for (const line of text.split("\n")) {
      const pid = Number(line.trim());
      if (line.trim() !== "" && Number.isInteger(pid)) pids.add(pid);
    }
    for (const child of await fs.readDirNames(dir)) {
      await walk(`${dir}/${child}`);
    }
  };
  for (const dir of dirs) await walk(dir);
  return [...pids];
}
