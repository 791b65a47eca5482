/**
 * The bytes of the files under a directory (apparent sizes, symlinks not followed), as the
 * kubelet measures volume and log usage without a `du` process. Entries removed during the
 * walk count as empty.
 *
 * @module
 */

/** Sum of the sizes of every file below `path`; 0 when `path` is missing. */
export async function directorySize(path: string): Promise<number> {
  return (await directoryUsage(path)).bytes;
}

/**
 * The file bytes below `path` and the inodes of the entries below it (files, links and
 * directories; `path` itself not counted, as upstream counts a log directory); zeros when
 * `path` is missing.
 */
export async function directoryUsage(
  path: string,
): Promise<{ bytes: number; inodes: number }> {
  let entries;
  try {
    entries = await Array.fromAsync(Deno.readDir(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { bytes: 0, inodes: 0 };
    throw error;
  }
  const total = { bytes: 0, inodes: 0 };
  for (const entry of entries) {
    const full = `${path}/${entry.name}`;
    let info;
    try {
      info = await Deno.lstat(full);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    if (info.isDirectory) {
      const below = await directoryUsage(full);
      total.bytes += below.bytes;
      total.inodes += below.inodes + 1;
    } else {
      total.bytes += info.size;
      total.inodes++;
    }
  }
  return total;
}
