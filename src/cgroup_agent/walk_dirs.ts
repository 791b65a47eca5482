/**
 * Walks the directories of a mount target below the agent's root dir with lstat: every
 * component must be a real directory and none a symbolic link, so a request's target cannot
 * be turned into another place on the host.
 *
 * @module
 */

/** `Deno.lstat`, or undefined when nothing is there. */
export async function lstatOrUndefined(
  path: string,
): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/**
 * Walks (and with `create`, makes, mode 0750) the directories `parts` below `root`; undefined
 * when one is missing and not made.
 * @throws {Deno.errors.PermissionDenied} "refused <what>: ..." for a symbolic link or a
 * non-directory on the way.
 */
export async function walkDirs(
  root: string,
  parts: readonly string[],
  create: boolean,
  what: string,
): Promise<string | undefined> {
  let path = root;
  for (const part of parts) {
    path += `/${part}`;
    let info = await lstatOrUndefined(path);
    if (!info && create) {
      await Deno.mkdir(path, { mode: 0o750 }).catch((error) => {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      });
      info = await Deno.lstat(path);
    }
    if (!info) return undefined;
    if (info.isSymlink || !info.isDirectory) {
      throw new Deno.errors.PermissionDenied(
        `refused ${what}: "${path}" is ${
          info.isSymlink ? "a symbolic link" : "not a directory"
        }`,
      );
    }
  }
  return path;
}
