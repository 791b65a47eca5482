/**
 * Makes the kubelet's root dir a shared mount as `root_shared.ts` plans it (upstream
 * `DoMakeRShared`): `mount --bind <root> <root>`, then `mount --make-rshared <root>`. Needs
 * every permission (`mount(8)`, /proc/self/mountinfo), so it runs in the cgroup agent or in a
 * kubelet run with every permission. The root is resolved to its real path first (it may be a
 * link an administrator made); afterwards the mount table must show it on a shared mount.
 *
 * @module
 */

import { parseMountInfo } from "./volume_tmpfs.ts";
import { runMountCommand } from "./mount_command.ts";
import {
  isSharedMount,
  mountHolding,
  planRootShare,
  type RootSharePlan,
} from "./root_shared.ts";

/** Shares one root dir. */
export interface RootShareExecutor {
  /**
   * Makes the root dir a shared mount unless it is on one or the plan refuses; returns the
   * plan carried out (`share`: it was done). Rejects when a mount command fails.
   */
  shareRootDir(): Promise<RootSharePlan>;
}

/**
 * Who shares the root dir: an executor (the kubelet itself with every permission, else the
 * cgroup agent), or why nobody can.
 */
export type RootShareAccess = { sharer: RootShareExecutor } | {
  reason: string;
};

async function mountTable() {
  return parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo"));
}

/** The executor for `rootDir`; concurrent calls share one run. */
export function rootShareExecutor(rootDir: string): RootShareExecutor {
  let running: Promise<RootSharePlan> | undefined;
  const share = async (): Promise<RootSharePlan> => {
    const root = await Deno.realPath(rootDir);
    const plan = planRootShare(await mountTable(), root);
    if (plan.action !== "share") return plan;
    await runMountCommand("mount", ["--no-canonicalize", "--bind", root, root]);
    await runMountCommand("mount", [
      "--no-canonicalize",
      "--make-rshared",
      root,
    ]);
    const holder = mountHolding(await mountTable(), root);
    if (holder?.mountPoint !== root || !isSharedMount(holder)) {
      throw new Error(
        `"${root}" is not on a shared mount after "mount --bind" and "mount --make-rshared"`,
      );
    }
    return plan;
  };
  return {
    shareRootDir: () => {
      running ??= share().finally(() => running = undefined);
      return running;
    },
  };
}
