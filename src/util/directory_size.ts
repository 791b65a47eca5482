/**
 * What the files under a directory take on disk, measured as upstream's `du` walk
 * (`pkg/volume/util/fs.DiskUsage`, used for volumes, pod logs and `/etc/hosts`): allocated
 * blocks of 512 bytes, not apparent sizes, so a directory counts its own blocks and a sparse
 * file only what it holds; a file with several links counts once; nothing on another
 * filesystem (a mount below) counts; symlinks are not followed. Entries removed during the
 * walk count as empty. Where the platform gives no block count, the apparent size stands in.
 *
 * @module
 */

/** Bytes on disk below `path` (`path` itself not counted); 0 when `path` is missing. */
export async function directorySize(path: string): Promise<number> {
  return (await directoryUsage(path)).bytes;
}

/** Options of {@linkcode directoryUsage}. */
export interface DirectoryUsageOptions {
  /**
   * Count `path`'s own blocks and inode too, as upstream measures a volume; left out (the
   * default) as upstream measures a log directory, entry by entry.
   */
  self?: boolean;
}

/**
 * The bytes on disk below `path` and the inodes of the entries below it (files, links and
 * directories); zeros when `path` is missing.
 */
export async function directoryUsage(
  path: string,
  options: DirectoryUsageOptions = {},
): Promise<{ bytes: number; inodes: number }> {
  let top;
  try {
    // `path` itself may be a link to the directory (upstream stats it, following links)
    top = await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { bytes: 0, inodes: 0 };
    throw error;
  }
  const total = { bytes: 0, inodes: 0 };
  if (options.self) {
    total.bytes += onDisk(top);
    total.inodes++;
  }
  if (top.isDirectory) {
    await walk(path, top.dev, new Set(), total);
  }
  return total;
}

function onDisk(info: Deno.FileInfo): number {
  return info.blocks !== null ? info.blocks * 512 : info.size;
}

async function walk(
  path: string,
  device: number,
  linked: Set<number>,
  total: { bytes: number; inodes: number },
): Promise<void> {
  let entries;
  try {
    entries = await Array.fromAsync(Deno.readDir(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  for (const entry of entries) {
    const full = `${path}/${entry.name}`;
    let info;
    try {
      info = await Deno.lstat(full);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    if (info.dev !== device) continue;
    if ((info.nlink ?? 1) > 1 && info.ino !== null) {
      if (linked.has(info.ino)) continue;
      linked.add(info.ino);
    }
    total.bytes += onDisk(info);
    total.inodes++;
    if (info.isDirectory) await walk(full, device, linked, total);
  }
}
