/**
 * Test clean-up for kubelet roots: a stopped kubelet leaves the tmpfs of its pods' secret,
 * projected and downwardAPI volumes mounted (as upstream's does), and a recursive remove then
 * fails on them with EBUSY, leaving the old root (certificates, kubeconfig) in place for the
 * next run of a harness that reuses a fixed path. A kubelet with every permission or the
 * cgroup agent also binds its root dir on itself at start (upstream `MakeRShared`) when the
 * host's mount there is private, so the root itself is a mount point too.
 * @module
 */

import { parseMountInfo } from "../src/cgroup_agent/volume_tmpfs.ts";
import {
  isSharedMount,
  mountHolding,
} from "../src/cgroup_agent/root_shared.ts";

/** The mounts strictly below `dir` (mount point, file system type, mount options), in table order. */
export async function mountsBelow(
  dir: string,
): Promise<{ path: string; type: string; options: string }[]> {
  const text = await Deno.readTextFile("/proc/self/mountinfo");
  return text.split("\n").filter((l) => l.includes(" - ")).map((l) => {
    const [head, tail] = l.split(" - ") as [string, string];
    const [type, , options] = tail.split(" ");
    return { path: head.split(" ")[4]!, type: type!, options: options! };
  }).filter((m) => m.path.startsWith(dir + "/"));
}

/** Unmounts every mount at or below `dir`, deepest first (lazily where a plain unmount fails). */
export async function unmountBelow(dir: string): Promise<void> {
  const mounts = await Deno.readTextFile("/proc/self/mounts").catch(() => "");
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  const points = mounts.split("\n")
    .map((line) => line.split(" ")[1] ?? "")
    .map((p) => p.replaceAll("\\040", " "))
    .filter((p) => p === dir || p.startsWith(prefix))
    .sort()
    .reverse();
  for (const point of points) {
    const plain = await new Deno.Command("umount", {
      args: [point],
      stderr: "null",
    })
      .output().catch(() => undefined);
    if (!plain?.success) {
      await new Deno.Command("umount", { args: ["-l", point], stderr: "null" })
        .output().catch(() => undefined);
    }
  }
}

/** Unmounts what is mounted below `dir`, then removes it; a missing `dir` is fine. */
export async function removeTree(dir: string): Promise<void> {
  await unmountBelow(dir);
  await Deno.remove(dir, { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
}

/**
 * The mount `path` is on and whether it is shared (a kubelet's root dir after its start, as
 * upstream `MakeRShared` leaves it); undefined when no mount holds it.
 */
export async function mountOf(
  path: string,
): Promise<{ mountPoint: string; shared: boolean } | undefined> {
  const table = parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo"));
  const holder = mountHolding(table, await Deno.realPath(path));
  return holder && {
    mountPoint: holder.mountPoint,
    shared: isSharedMount(holder),
  };
}
