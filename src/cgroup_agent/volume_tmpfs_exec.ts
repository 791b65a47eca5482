/**
 * Mounts and unmounts pod volume tmpfs as `volume_tmpfs.ts` allows, with `mount(8)` and
 * `umount(8)` (Deno has no mount call; both need every permission, which only the agent, or a
 * kubelet run with every permission, holds). The directory is built from the root dir and
 * walked with lstat: every component must be a directory, none a symbolic link, so a pod's
 * volume path cannot be turned into another place on the host; after the mount the mount
 * table must show the tmpfs exactly there, else it is taken off again.
 *
 * @module
 */

import {
  checkTmpfsSize,
  checkTmpfsTarget,
  isTmpfsMountPoint,
  parseMountInfo,
  tmpfsMountOptions,
  tmpfsNoswapSupported,
  type TmpfsTarget,
  tmpfsTargetParts,
} from "./volume_tmpfs.ts";
import { inMountOrder, runMountCommand } from "./mount_command.ts";

/** Mounts on pod volume directories below one root dir. */
export interface VolumeTmpfsExecutor {
  /** Mounts a tmpfs there (nothing when one is already mounted there). */
  mountVolumeTmpfs(target: TmpfsTarget, sizeBytes: number): Promise<void>;
  /** Unmounts the tmpfs there; false when there is none (nothing done). */
  unmountVolumeTmpfs(target: TmpfsTarget): Promise<boolean>;
}

async function mountTable() {
  return parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo"));
}

/**
 * The target's directory, after checking that each component below the root dir is a real
 * directory; undefined when one is missing.
 * @throws {Deno.errors.PermissionDenied} for a symbolic link or a non-directory on the way.
 */
async function walk(
  root: string,
  target: TmpfsTarget,
): Promise<string | undefined> {
  let path = root;
  for (const part of tmpfsTargetParts(target)) {
    path += `/${part}`;
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    }
    if (info.isSymlink || !info.isDirectory) {
      throw new Deno.errors.PermissionDenied(
        `agent refuses to mount on "${path}": it is ${
          info.isSymlink ? "a symbolic link" : "not a directory"
        }`,
      );
    }
  }
  return path;
}

function checked(target: TmpfsTarget, sizeBytes = 0): void {
  const refusal = checkTmpfsTarget(target) ?? checkTmpfsSize(sizeBytes);
  if (refusal) {
    throw new Deno.errors.PermissionDenied(`agent refuses tmpfs: ${refusal}`);
  }
}

async function inUserNamespace(): Promise<boolean> {
  try {
    const map = (await Deno.readTextFile("/proc/self/uid_map")).trim();
    return !/^0\s+0\s+4294967295$/.test(map);
  } catch {
    return true;
  }
}

/**
 * The executor for `rootDir` (resolved once: the root dir itself may be a link an
 * administrator made; nothing below it may).
 */
export function volumeTmpfsExecutor(rootDir: string): VolumeTmpfsExecutor {
  let root: Promise<string> | undefined;
  let noswap: Promise<boolean> | undefined;
  const realRoot = () => root ??= Deno.realPath(rootDir);
  return {
    mountVolumeTmpfs: (target, sizeBytes) =>
      inMountOrder(async () => {
        checked(target, sizeBytes);
        const path = await walk(await realRoot(), target);
        if (!path) {
          throw new Deno.errors.NotFound(
            `no volume directory for ${target.plugin}/${target.name} of pod ${target.uid}`,
          );
        }
        const before = await mountTable();
        if (isTmpfsMountPoint(before, path)) return;
        noswap ??= inUserNamespace().then((userns) =>
          tmpfsNoswapSupported(Deno.osRelease(), userns)
        );
        const options = tmpfsMountOptions(sizeBytes, await noswap);
        await runMountCommand("mount", [
          "--no-canonicalize",
          "-t",
          "tmpfs",
          ...(options ? ["-o", options] : []),
          "tmpfs",
          path,
        ]);
        const after = await mountTable();
        if (isTmpfsMountPoint(after, path)) return;
        // a component was swapped between the walk and the mount: take off what it made
        const known = new Set(before.map((e) => e.mountPoint));
        for (const e of after) {
          if (
            e.fsType === "tmpfs" && e.source === "tmpfs" &&
            !known.has(e.mountPoint)
          ) {
            await runMountCommand("umount", [
              "--no-canonicalize",
              "-l",
              e.mountPoint,
            ])
              .catch(() => {});
          }
        }
        throw new Deno.errors.PermissionDenied(
          `agent refuses tmpfs: "${path}" changed while it was mounted`,
        );
      }),
    unmountVolumeTmpfs: (target) =>
      inMountOrder(async () => {
        checked(target);
        const path = await walk(await realRoot(), target);
        if (!path || !isTmpfsMountPoint(await mountTable(), path)) return false;
        await runMountCommand("umount", ["--no-canonicalize", path]);
        return true;
      }),
  };
}
