/**
 * The one reader of host files the Deno sandbox does not allow: /proc and /sys figures and
 * filesystem statistics and cgroup creation times, for the node's usage metrics, the eviction signals and image GC.
 * Directly with every permission, else through the cgroup agent.
 *
 * @module
 */
import {
  type CgroupAgentClient,
  type CgroupTreeFs,
  denoCgroupTreeFs,
  type FilesystemFigures,
  readFilesystemFigures,
} from "../../cgroup_agent/mod.ts";

/** Reads of the host the Deno sandbox does not allow. */
export interface HostFiles
  extends Pick<CgroupTreeFs, "exists" | "readTextFile"> {
  statfs(path: string): Promise<FilesystemFigures>;
  /** A directory's modification time (ms): a cgroup's creation time, as cAdvisor takes it. */
  modifiedMs(path: string): Promise<number>;
}

/** {@linkcode HostFiles} read directly (every permission). */
export const hostFilesOnHost: HostFiles = {
  exists: (path) => denoCgroupTreeFs.exists(path),
  readTextFile: (path) => denoCgroupTreeFs.readTextFile(path),
  statfs: readFilesystemFigures,
  modifiedMs: async (path) => {
    const mtime = (await Deno.stat(path)).mtime;
    if (!mtime) throw new Deno.errors.NotFound(`no mtime for "${path}"`);
    return mtime.getTime();
  },
};

/** {@linkcode HostFiles} read through the cgroup agent. */
export function hostFilesThrough(agent: CgroupAgentClient): HostFiles {
  return {
    exists: (path) => agent.fs.exists(path),
    readTextFile: (path) => agent.fs.readTextFile(path),
    statfs: (path) => agent.statfs(path),
    modifiedMs: (path) => agent.modifiedMs(path),
  };
}
