/**
 * Formats (when empty) and mounts a local PersistentVolume's block device on a pod's volume
 * directory, as upstream's local volume plugin does through `SafeFormatAndMount`: `blkid` to
 * see what the device holds, `mkfs.<type>` only when it holds nothing, `fsck -a` before a
 * writable mount, then `mount(8)`. A device already mounted elsewhere (another pod of the same
 * PV) is mounted again as it is: no format check and no fsck of a mounted file system.
 *
 * The device must resolve, inside `/dev`, to a block device that is mounted nowhere but on pod
 * volume directories (the host's own file systems stay out of pods); the directory is built from parts
 * below the root dir and walked with lstat (no symbolic link). After the mount the mount table
 * must show the device exactly there, else what the mount made is taken off again. Needs every
 * permission, so it runs in the cgroup agent or in a kubelet run with every permission.
 *
 * @module
 */

import {
  checkLocalBlockMount,
  checkLocalBlockTarget,
  type DiskFormat,
  fsckStopsMount,
  localBlockFsType,
  type LocalBlockMount,
  localBlockMountOptions,
  type LocalBlockTarget,
  localBlockTargetParts,
  mkfsArgs,
  parseDiskFormat,
} from "./volume_local_block.ts";
import { type MountInfoEntry, parseMountInfo } from "./volume_tmpfs.ts";
import { inMountOrder, runMountCommand } from "./mount_command.ts";
import { walkDirs } from "./walk_dirs.ts";

/** Mounts local block devices on pod volume directories below one root dir. */
export interface LocalBlockExecutor {
  /** Formats when empty and mounts (nothing when the device is mounted there already). */
  mountLocalBlock(
    target: LocalBlockTarget,
    mount: LocalBlockMount,
  ): Promise<void>;
  /** Unmounts what is mounted on the target; false when nothing is (nothing done). */
  unmountLocalBlock(target: LocalBlockTarget): Promise<boolean>;
  /**
   * Whether `device` (below /dev, links followed inside /dev) is a block device.
   * @throws {Deno.errors.NotFound} when nothing is there.
   */
  isBlockDevice(device: string): Promise<boolean>;
}

/** A program's exit code and what it printed (stdout and stderr). */
interface ToolResult {
  code: number;
  output: string;
}

/** Runs one of the storage tools; a missing program is code 127. */
async function runTool(command: string, args: string[]): Promise<ToolResult> {
  try {
    const out = await new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    return {
      code: out.code,
      output: (text.decode(out.stdout) + text.decode(out.stderr)).trim(),
    };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { code: 127, output: `${command} not found` };
    }
    throw error;
  }
}

async function mountTable(): Promise<MountInfoEntry[]> {
  return parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo"));
}

function refuse(why: string): never {
  throw new Deno.errors.PermissionDenied(`refused local block volume: ${why}`);
}

/** The device's real path, checked to stay inside /dev. */
async function realDevice(device: string): Promise<string> {
  const why = checkLocalBlockMount({ device, fsType: "", readOnly: false });
  if (why) refuse(why);
  const real = await Deno.realPath(device);
  if (!real.startsWith("/dev/")) {
    refuse(`device "${device}" leads to "${real}", outside /dev`);
  }
  return real;
}

/** What the device holds, by `blkid` (upstream `GetDiskFormat`). */
async function diskFormat(device: string): Promise<DiskFormat> {
  const out = await runTool("blkid", [
    "-p",
    "-s",
    "TYPE",
    "-s",
    "PTTYPE",
    "-o",
    "export",
    device,
  ]);
  if (out.code !== 0 && out.code !== 2) {
    throw new Error(
      `failed to get disk format of disk ${device}: blkid exit ${out.code}: ${out.output}`,
    );
  }
  return parseDiskFormat(out.code, out.output);
}

/** Makes the device ready to mount: a file system when empty, fsck before a writable mount. */
async function prepareDevice(
  device: string,
  fsType: string,
  readOnly: boolean,
): Promise<void> {
  const format = await diskFormat(device);
  if (format.kind === "partitioned") {
    throw new Error(
      `disk ${device} holds a partition table and no file system: it is not formatted over`,
    );
  }
  if (format.kind === "none") {
    if (readOnly) {
      throw new Error(
        `cannot mount unformatted disk ${device} as we are manipulating it in read-only mode`,
      );
    }
    const mkfs = await runTool(`mkfs.${fsType}`, mkfsArgs(fsType, device));
    if (mkfs.code !== 0) {
      throw new Error(
        `format of disk "${device}" failed: type:("${fsType}") exit ${mkfs.code}: ${mkfs.output}`,
      );
    }
    return;
  }
  if (!readOnly) {
    const fsck = await runTool("fsck", ["-a", device]);
    if (fsckStopsMount(fsck.code)) {
      throw new Error(
        `'fsck' found errors on device ${device} but could not correct them: ${fsck.output}`,
      );
    }
  }
}

/** The executor for `rootDir` (resolved once, as the tmpfs executor does). */
export function localBlockExecutor(rootDir: string): LocalBlockExecutor {
  let root: Promise<string> | undefined;
  const realRoot = () => root ??= Deno.realPath(rootDir);
  const checkedTarget = (target: LocalBlockTarget) => {
    const why = checkLocalBlockTarget(target);
    if (why) refuse(why);
  };
  return {
    isBlockDevice: async (device) =>
      (await Deno.stat(await realDevice(device))).isBlockDevice === true,
    mountLocalBlock: (target, mount) =>
      inMountOrder(async () => {
        checkedTarget(target);
        const why = checkLocalBlockMount(mount);
        if (why) refuse(why);
        const device = await realDevice(mount.device);
        if (!(await Deno.stat(device)).isBlockDevice) {
          throw new Error(`local volume ${mount.device} is not a block device`);
        }
        const path = (await walkDirs(
          await realRoot(),
          localBlockTargetParts(target),
          true,
          "local block volume",
        ))!;
        const before = await mountTable();
        const top = before.filter((e) => e.mountPoint === path).at(-1);
        if (top?.source === device) return;
        if (top) {
          refuse(`"${path}" already has ${top.source} (${top.fsType}) mounted`);
        }
        // the host's own file systems stay out of pods: a device mounted anywhere but on
        // pod volume directories is refused
        const pods = `${await realRoot()}/pods/`;
        const outside = before.find((e) =>
          e.source === device && !e.mountPoint.startsWith(pods)
        );
        if (outside) {
          refuse(
            `device "${mount.device}" is mounted on "${outside.mountPoint}", outside the pods' volume directories`,
          );
        }
        const fsType = localBlockFsType(mount.fsType);
        if (!before.some((e) => e.source === device)) {
          await prepareDevice(device, fsType, mount.readOnly);
        }
        await runMountCommand("mount", [
          "--no-canonicalize",
          "-t",
          fsType,
          "-o",
          localBlockMountOptions(mount.readOnly),
          device,
          path,
        ]);
        const after = await mountTable();
        if (
          after.filter((e) => e.mountPoint === path).at(-1)?.source === device
        ) return;
        // a component was swapped between the walk and the mount: take off what it made
        const known = new Set(before.map((e) => e.mountPoint));
        for (const e of after) {
          if (e.source === device && !known.has(e.mountPoint)) {
            await runMountCommand("umount", [
              "--no-canonicalize",
              "-l",
              e.mountPoint,
            ]).catch(() => {});
          }
        }
        refuse(`"${path}" changed while it was mounted`);
      }),
    unmountLocalBlock: (target) =>
      inMountOrder(async () => {
        checkedTarget(target);
        const path = await walkDirs(
          await realRoot(),
          localBlockTargetParts(target),
          false,
          "local block volume",
        );
        if (!path) return false;
        if (!(await mountTable()).some((e) => e.mountPoint === path)) {
          return false;
        }
        await runMountCommand("umount", ["--no-canonicalize", path]);
        return true;
      }),
  };
}
