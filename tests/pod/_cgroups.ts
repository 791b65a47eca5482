/**
 * Cgroup clean-up for the e2e tests that give their kubelet a cgroup root of their own.
 *
 * @module
 */

const MOUNT = "/sys/fs/cgroup";

/** A cgroup interface file's value, trimmed; undefined when it cannot be read. */
export async function readCgroupFile(
  path: string,
): Promise<string | undefined> {
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch {
    return undefined;
  }
}

/** Removes `root` and everything below it from every hierarchy, deepest first. */
export async function removeCgroupTree(root: string): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    try {
      for await (const e of Deno.readDir(dir)) {
        if (e.isDirectory) await walk(`${dir}/${e.name}`);
      }
      await Deno.remove(dir);
    } catch {
      // gone already, or a process still inside: nothing more to do here
    }
  };
  for await (const h of Deno.readDir(MOUNT)) {
    if (h.isDirectory) await walk(`${MOUNT}/${h.name}${root}`);
  }
}
