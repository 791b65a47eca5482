/**
 * `fsGroup` ownership of kubelet-made volumes (upstream `SetVolumeOwnership`): every file and
 * directory gets the group, files gain group read (and write unless the volume is read-only),
 * directories also group search and setgid so new files inherit the group.
 *
 * Only ever run where no container can write: on a new, empty emptyDir (its root only) and on
 * kubelet-written volumes that containers mount read-only. `Deno.chown` follows symlinks and
 * Deno has no `lchown`, so symlinks are skipped, and a directory a container could change
 * while this walks it would let a planted symlink hand a host file to the group.
 *
 * @module
 */

const RW_MASK = 0o660;
const RO_MASK = 0o440;
const EXEC_MASK = 0o110;
const SETGID = 0o2000;

/** The mode `fsGroup` gives a file or directory of mode `mode`. */
export function ownershipMode(
  mode: number,
  options: { directory: boolean; readOnly: boolean },
): number {
  let mask = options.readOnly ? RO_MASK : RW_MASK;
  if (options.directory) mask |= EXEC_MASK | SETGID;
  return (mode & 0o7777) | mask;
}

async function apply(
  path: string,
  fsGroup: number,
  options: { readOnly: boolean; recursive: boolean },
): Promise<void> {
  const info = await Deno.lstat(path);
  if (info.isSymlink) return;
  await Deno.chown(path, null, fsGroup);
  await Deno.chmod(
    path,
    ownershipMode(info.mode ?? 0, {
      directory: info.isDirectory,
      readOnly: options.readOnly,
    }),
  );
  if (!info.isDirectory || !options.recursive) return;
  for await (const entry of Deno.readDir(path)) {
    await apply(`${path}/${entry.name}`, fsGroup, options);
  }
}

/**
 * Gives `dir` (and with `recursive` everything below it that is not a symlink) to `fsGroup`.
 */
export async function setVolumeOwnership(
  dir: string,
  fsGroup: number,
  options: { readOnly: boolean; recursive: boolean },
): Promise<void> {
  await apply(dir, fsGroup, options);
}
