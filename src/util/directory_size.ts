/**
 * The bytes of the files under a directory (apparent sizes, symlinks not followed), as the
 * kubelet measures volume and log usage without a `du` process. Entries removed during the
 * walk count as empty.
 *
 * @module
 */

/** Sum of the sizes of every file below `path`; 0 when `path` is missing. */
export async function directorySize(path: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await Array.fromAsync(Deno.readDir(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return 0;
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
    total += info.isDirectory ? await directorySize(full) : info.size;
  }
  return total;
}
