/**
 * Whether something is at a path, without following a final symbolic link.
 *
 * @module
 */

/** True when `path` names anything (a dangling link too); a missing path is false, any other error throws. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
