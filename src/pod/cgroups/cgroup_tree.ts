/**
 * Thin executor over the cgroup file system: creates a cgroup and writes the files
 * `cgroupFileWrites` chose, on cgroup v1 (one directory per hierarchy it writes to) or v2 (one
 * directory, with the ancestors' `cgroup.subtree_control` enabling the controllers it needs,
 * as libcontainer's `fs2` does), lists the pod cgroups below the QoS directories and removes
 * cgroups. The mount point is a parameter so tests run it on a temporary directory.
 *
 * @module
 */

import {
  type CgroupFileWrite,
  cgroupFileWrites,
  type CgroupSettings,
  type CgroupVersion,
  podUidFromCgroupName,
} from "./cgroup_settings.ts";
import { type CgroupTreeFs, readProcsBelow } from "../../cgroup_agent/mod.ts";

export { type CgroupTreeFs, denoCgroupTreeFs } from "../../cgroup_agent/mod.ts";

/** A mounted cgroup file system: where, which generation, and its hugetlb page sizes. */
export interface CgroupTree {
  fs: CgroupTreeFs;
  mount: string;
  version: CgroupVersion;
  /** Controllers there are (v1: mounted hierarchies; v2: the root's `cgroup.controllers`). */
  controllers: ReadonlySet<string>;
  /** Page sizes the hugetlb controller offers (`2MB`); empty without the controller. */
  hugetlbSizes: readonly string[];
}

/**
 * Looks at `mount`: v2 when it has `cgroup.controllers` (its controllers; the node's hugepage
 * sizes when `hugetlb` is among them), else v1 (the mounted hierarchies; the sizes only with
 * a `hugetlb` one).
 */
export async function openCgroupTree(
  fs: CgroupTreeFs,
  mount: string,
  nodeHugepageSizes: readonly string[],
): Promise<CgroupTree> {
  if (await fs.exists(`${mount}/cgroup.controllers`)) {
    const controllers = (await fs.readTextFile(`${mount}/cgroup.controllers`))
      .trim().split(/\s+/);
    return {
      fs,
      mount,
      version: "v2",
      controllers: new Set(controllers),
      hugetlbSizes: controllers.includes("hugetlb") ? nodeHugepageSizes : [],
    };
  }
  const hierarchies = await fs.readDirNames(mount);
  return {
    fs,
    mount,
    version: "v1",
    controllers: new Set(hierarchies),
    hugetlbSizes: hierarchies.includes("hugetlb") ? nodeHugepageSizes : [],
  };
}

function dirOf(tree: CgroupTree, controller: string, path: string): string {
  return tree.version === "v1"
    ? `${tree.mount}/${controller}${path}`
    : `${tree.mount}${path}`;
}

/** True when the cgroup exists (v1: in the `cpu` and `memory` hierarchies). */
export async function cgroupExists(
  tree: CgroupTree,
  path: string,
): Promise<boolean> {
  if (tree.version === "v2") return await tree.fs.exists(tree.mount + path);
  return await tree.fs.exists(dirOf(tree, "cpu", path)) &&
    await tree.fs.exists(dirOf(tree, "memory", path));
}

/**
 * v2: turns on every controller the parent offers in `cgroup.subtree_control` of each
 * ancestor from the root down, so the new cgroup gets the interface files.
 */
async function enableSubtreeControllers(
  tree: CgroupTree,
  path: string,
): Promise<void> {
  const parts = path.split("/").filter((p) => p !== "");
  let dir = tree.mount;
  for (const part of parts) {
    const offered = (await tree.fs.readTextFile(`${dir}/cgroup.controllers`))
      .trim().split(/\s+/).filter((c) => c !== "");
    if (offered.length) {
      const control = `${dir}/cgroup.subtree_control`;
      try {
        await tree.fs.writeTextFile(
          control,
          offered.map((c) => `+${c}`).join(" "),
        );
      } catch {
        // one refused controller fails the whole write: then each alone, as libcontainer
        for (const c of offered) {
          await tree.fs.writeTextFile(control, `+${c}`).catch(() => {});
        }
      }
    }
    dir += `/${part}`;
    await tree.fs.mkdirs(dir);
  }
}

/**
 * Creates the cgroup when missing and writes its settings (upstream `cgroupManager.Create`
 * and `Update`); `create: false` only updates what exists. The first failed write rejects.
 */
export async function applyCgroup(
  tree: CgroupTree,
  path: string,
  settings: CgroupSettings,
  options: { create?: boolean } = {},
): Promise<CgroupFileWrite[]> {
  // a controller the host lacks (no pids hierarchy, say) is skipped, as libcontainer does
  const writes = cgroupFileWrites(settings, tree.version, tree.hugetlbSizes)
    .filter((w) => tree.controllers.has(w.controller));
  const create = options.create ?? true;
  if (tree.version === "v2") {
    if (create) await enableSubtreeControllers(tree, path);
    else if (!await tree.fs.exists(tree.mount + path)) return [];
  } else if (create) {
    // in every hierarchy but devices (the runtime's), as upstream's cgroup manager does
    for (const c of [...tree.controllers].sort()) {
      if (c === "devices") continue;
      await tree.fs.mkdirs(dirOf(tree, c, path));
      if (c === "cpuset") await inheritCpuset(tree, path);
    }
  }
  const done: CgroupFileWrite[] = [];
  for (const w of writes) {
    const dir = dirOf(tree, w.controller, path);
    if (!create && !await tree.fs.exists(dir)) continue;
    try {
      await tree.fs.writeTextFile(`${dir}/${w.file}`, w.value);
    } catch (error) {
      if (w.optional && error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    done.push(w);
  }
  return done;
}

/**
 * v1 cpuset: a new cgroup starts with no CPUs and no memory nodes, where no task can run, so
 * each directory on the path with an empty `cpuset.cpus` or `cpuset.mems` takes its parent's,
 * as upstream does. Best effort: the runtime fills them the same way when it places a
 * container, and the cgroup agent does not let the kubelet read above kubepods.
 */
async function inheritCpuset(tree: CgroupTree, path: string): Promise<void> {
  let dir = `${tree.mount}/cpuset`;
  for (const part of path.split("/").filter((p) => p !== "")) {
    const parent = dir;
    dir += `/${part}`;
    for (const file of ["cpuset.cpus", "cpuset.mems"]) {
      try {
        if ((await tree.fs.readTextFile(`${dir}/${file}`)).trim() !== "") {
          continue;
        }
        const value = (await tree.fs.readTextFile(`${parent}/${file}`))
          .trim();
        if (value !== "") await tree.fs.writeTextFile(`${dir}/${file}`, value);
      } catch {
        // left empty: see above
      }
    }
  }
}

/**
 * Pod cgroups below `parents` (kubepods and its QoS directories), uid → cgroup path, from
 * every v1 hierarchy or the v2 tree (upstream `GetAllPodsFromCgroups`).
 */
export async function listPodCgroups(
  tree: CgroupTree,
  parents: readonly string[],
): Promise<Map<string, string>> {
  const bases = tree.version === "v2"
    ? [tree.mount]
    : (await tree.fs.readDirNames(tree.mount)).map((h) => `${tree.mount}/${h}`);
  const found = new Map<string, string>();
  for (const parent of parents) {
    for (const base of bases) {
      for (const name of await tree.fs.readDirNames(base + parent)) {
        const uid = podUidFromCgroupName(name);
        if (uid !== undefined) found.set(uid, `${parent}/${name}`);
      }
    }
  }
  return found;
}

/**
 * Removes the cgroup's directory, child cgroups first, from every v1 hierarchy or the v2 tree
 * (upstream `Destroy`); missing ones are fine; the first other failure (a process still inside, no permission)
 * rejects after trying the rest.
 */
export async function removeCgroup(
  tree: CgroupTree,
  path: string,
): Promise<void> {
  if (!path.startsWith("/") || path === "/") return;
  const dirs = tree.version === "v2"
    ? [tree.mount + path]
    : (await tree.fs.readDirNames(tree.mount)).map((h) =>
      `${tree.mount}/${h}${path}`
    );
  let failure: unknown;
  for (const dir of dirs) {
    try {
      await removeDirTree(tree.fs, dir);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

/**
 * Processes in the cgroup and its child cgroups (upstream `cgroupManager.Pids`), from every
 * v1 hierarchy or the v2 tree; duplicates removed.
 */
export async function cgroupProcs(
  tree: CgroupTree,
  path: string,
): Promise<number[]> {
  const dirs = tree.version === "v2"
    ? [tree.mount + path]
    : (await tree.fs.readDirNames(tree.mount)).map((h) =>
      `${tree.mount}/${h}${path}`
    );
  return await readProcsBelow(tree.fs, dirs);
}

/** Child cgroups first (containers' cgroups left inside a pod's), then the directory. */
async function removeDirTree(fs: CgroupTreeFs, dir: string): Promise<void> {
  for (const child of await fs.readDirNames(dir)) {
    await removeDirTree(fs, `${dir}/${child}`);
  }
  await fs.rmdir(dir);
}
