/**
 * What may be done for a `local` PersistentVolume whose path is a block device and whose
 * volume mode is Filesystem (upstream's local volume plugin with `SafeFormatAndMount`),
 * decided without I/O. The device is mounted on the pod's volume directory,
 * `<root-dir>/pods/<uid>/volumes/kubernetes.io~local-volume/<pv>`, built from parts by whoever
 * mounts, so a request cannot name another place; the device must be a path below `/dev`
 * (the executor checks that it is a block device, following links only inside `/dev`).
 *
 * @module
 */

/** The pod volume directory a local block device is mounted on, by its parts. */
export interface LocalBlockTarget {
  /** The pod's UID. */
  uid: string;
  /** The PersistentVolume's name. */
  pv: string;
}

/** What is mounted there and how. */
export interface LocalBlockMount {
  /** The PV's `local.path`: a block device below `/dev`. */
  device: string;
  /** The PV's `local.fsType`; empty means ext4 (upstream's default). */
  fsType: string;
  readOnly: boolean;
}

/** The escaped plugin name of upstream's local volume plugin. */
export const LOCAL_VOLUME_PLUGIN = "kubernetes.io~local-volume";

/** File systems the agent formats and mounts (upstream's mkfs flags are known for these). */
export const LOCAL_BLOCK_FS_TYPES: readonly string[] = [
  "ext2",
  "ext3",
  "ext4",
  "xfs",
];

const UID = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
/** PV names are DNS subdomains (API validation); no component can be "." or "..". */
const DNS_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Undefined when `target` names a pod's local volume directory, else why not. */
export function checkLocalBlockTarget(
  target: LocalBlockTarget,
): string | undefined {
  if (typeof target.uid !== "string" || !UID.test(target.uid)) {
    return `pod uid ${
      JSON.stringify(target.uid)
    } is not a UID (letters, digits and dashes)`;
  }
  if (
    typeof target.pv !== "string" || target.pv.length > 253 ||
    !DNS_SUBDOMAIN.test(target.pv)
  ) {
    return `PersistentVolume name ${
      JSON.stringify(target.pv)
    } is not a DNS subdomain`;
  }
  return undefined;
}

/** Undefined when the mount names a device path below /dev and a known file system. */
export function checkLocalBlockMount(
  mount: LocalBlockMount,
): string | undefined {
  const device = mount.device;
  if (typeof device !== "string" || !device.startsWith("/dev/")) {
    return `device ${JSON.stringify(device)} is not a path below /dev`;
  }
  const parts = device.split("/").slice(1);
  if (
    parts.some((p) => p === "" || p === "." || p === ".." || p.includes("\0"))
  ) {
    return `device ${
      JSON.stringify(device)
    } has an empty, "." or ".." component`;
  }
  if (
    typeof mount.fsType !== "string" ||
    (mount.fsType !== "" && !LOCAL_BLOCK_FS_TYPES.includes(mount.fsType))
  ) {
    return `fsType ${JSON.stringify(mount.fsType)} is not one of ${
      LOCAL_BLOCK_FS_TYPES.join(", ")
    }`;
  }
  if (typeof mount.readOnly !== "boolean") {
    return "readOnly must be true or false";
  }
  return undefined;
}

/** The components of the target's directory below the root dir. */
export function localBlockTargetParts(target: LocalBlockTarget): string[] {
  return ["pods", target.uid, "volumes", LOCAL_VOLUME_PLUGIN, target.pv];
}

/** The file system to make or expect: the PV's, or ext4 (upstream's default). */
export function localBlockFsType(fsType: string): string {
  return fsType === "" ? "ext4" : fsType;
}

/** Upstream's `mkfs.<type>` arguments for an unformatted device (`formatAndMountSensitive`). */
export function mkfsArgs(fsType: string, device: string): string[] {
  if (fsType === "ext4" || fsType === "ext3") return ["-F", "-m0", device];
  if (fsType === "xfs") return ["-f", device];
  return [device];
}

/** What `blkid -p -s TYPE -s PTTYPE -o export <device>` found on a device. */
export type DiskFormat =
  | { kind: "none" }
  | { kind: "fs"; type: string }
  | { kind: "partitioned" };

/**
 * Reads blkid's answer as upstream's `GetDiskFormat` does: exit 2 means nothing on the
 * device; a partition table without a file system is not formatted over.
 */
export function parseDiskFormat(exitCode: number, output: string): DiskFormat {
  if (exitCode === 2) return { kind: "none" };
  let type = "";
  let partitions = false;
  for (const line of output.split("\n")) {
    const [key, ...rest] = line.trim().split("=");
    if (key === "TYPE") type = rest.join("=");
    if (key === "PTTYPE") partitions = true;
  }
  if (type !== "") return { kind: "fs", type };
  return partitions ? { kind: "partitioned" } : { kind: "none" };
}

/** The mount options: upstream adds `defaults`, and `ro` for a read-only claim. */
export function localBlockMountOptions(readOnly: boolean): string {
  return readOnly ? "ro,defaults" : "defaults";
}

/**
 * Whether fsck's exit code stops the mount (upstream `checkAndRepairFilesystem`): only 4,
 * errors it could not correct; 1 (corrected) and other failures let the mount go on.
 */
export function fsckStopsMount(exitCode: number): boolean {
  return exitCode === 4;
}
