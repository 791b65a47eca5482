/**
 * Upstream `swapControllerAvailable`, on the host's files.
 *
 * @module
 */

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * cgroup v2 when /sys/fs/cgroup has `cgroup.controllers`, then `memory.swap.max` in the
 * process's own cgroup; cgroup v1 with `memory/memory.memsw.limit_in_bytes`. Unknown (no swap
 * settings) when /sys or /proc cannot be read, as under the planned permission lists.
 * `root` stands in for `/` in tests.
 */
export async function detectSwapController(
  root = "",
): Promise<"v1" | "v2" | undefined> {
  try {
    if (await exists(`${root}/sys/fs/cgroup/cgroup.controllers`)) {
      const self = await Deno.readTextFile(`${root}/proc/self/cgroup`);
      const path = /^0::(.*)$/m.exec(self)?.[1];
      return path !== undefined &&
          await exists(
            `${root}/sys/fs/cgroup${path.replace(/\/$/, "")}/memory.swap.max`,
          )
        ? "v2"
        : undefined;
    }
    return await exists(
        `${root}/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes`,
      )
      ? "v1"
      : undefined;
  } catch {
    return undefined;
  }
}
