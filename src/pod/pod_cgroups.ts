/**
 * The pod's cgroup name, sent as the sandbox's `linux.cgroupParent` (upstream
 * `GetPodContainerName` of the pod container manager): `<cgroupRoot>/kubepods/pod<uid>` for
 * Guaranteed pods and `<cgroupRoot>/kubepods/<burstable|besteffort>/pod<uid>` otherwise, in
 * the cgroupfs driver's path form or the systemd driver's expanded slice form. Without
 * `cgroupsPerQOS` every pod gets the cgroup root itself. Pure.
 *
 * @module
 */

import { type PodCgroupConfig, podQOSClass } from "./pod_resources.ts";
import type { Pod } from "./types.ts";

/** The kubelet settings that place pod cgroups. */
export interface PodCgroupOptions {
  /** `cgroupRoot`; "" means the root ("/"), as upstream defaults it with `cgroupsPerQOS`. */
  cgroupRoot?: string;
  /** `cgroupsPerQOS` (default true). */
  cgroupsPerQOS?: boolean;
  /** `cgroupDriver` (default "cgroupfs"). */
  cgroupDriver?: string;
}

/** Splits a cgroupfs path into components (`/a/b` → [a, b]). */
function cgroupfsComponents(path: string): string[] {
  return path.split("/").filter((p) => p !== "");
}

/** Splits a systemd slice (`/a.slice/a-b.slice` or `a-b.slice`) into components. */
function systemdComponents(name: string): string[] {
  const base = name.split("/").filter((p) => p !== "").pop() ?? "";
  const bare = base.replace(/\.slice$/, "");
  if (bare === "" || bare === "-") return [];
  return bare.split("-").map((p) => p.replaceAll("_", "-"));
}

/** `/a/b/c`: the cgroupfs form of a name (upstream `ToCgroupfs`). */
function toCgroupfs(parts: string[]): string {
  return "/" + parts.join("/");
}

/**
 * `/a.slice/a-b.slice/a-b-c.slice`: the systemd form (upstream `ToSystemd`), each component's
 * dashes turned into underscores.
 */
function toSystemd(parts: string[]): string {
  if (parts.length === 0) return "/";
  const escaped = parts.map((p) => p.replaceAll("-", "_"));
  return escaped.map((_, i) => `/${escaped.slice(0, i + 1).join("-")}.slice`)
    .join("");
}

/** The pod's cgroup in the driver's form, as the runtime gets it in `cgroupParent`. */
export function podCgroupParent(pod: Pod, options: PodCgroupOptions): string {
  const systemd = options.cgroupDriver === "systemd";
  const rootText = options.cgroupRoot || "/";
  const root = systemd
    ? systemdComponents(rootText)
    : cgroupfsComponents(rootText);
  // upstream's no-op pod container manager hands out the root in cgroupfs form
  if (options.cgroupsPerQOS === false) return toCgroupfs(root);
  const qos = podQOSClass(pod);
  const parts = [...root, "kubepods"];
  if (qos !== "Guaranteed") parts.push(qos.toLowerCase());
  parts.push(`pod${pod.metadata.uid ?? ""}`);
  return systemd ? toSystemd(parts) : toCgroupfs(parts);
}

/** The cgroup file system as pod cgroup removal needs it. */
export interface CgroupFs {
  /** Entry names of a directory (missing → empty). */
  readDirNames(path: string): Promise<string[]>;
  /** Removes an empty cgroup directory; rejects with `Deno.errors.NotFound` when absent. */
  rmdir(path: string): Promise<void>;
}

/** {@linkcode CgroupFs} on the host. */
export const denoCgroupFs: CgroupFs = {
  async readDirNames(path) {
    const names: string[] = [];
    try {
      for await (const e of Deno.readDir(path)) {
        if (e.isDirectory) names.push(e.name);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return names;
  },
  rmdir: (path) => Deno.remove(path),
};

/** Where cgroup hierarchies are mounted. */
export const CGROUP_MOUNT = "/sys/fs/cgroup";

/**
 * Removes a pod's cgroup directory from every hierarchy once its containers are gone
 * (upstream `SyncTerminatedPod` destroying the pod container): `<mount>/<controller><parent>`
 * for cgroup v1 and `<mount><parent>` for v2. Missing directories are fine; the first other
 * failure (a process still inside, no permission) rejects after trying the rest.
 */
export async function removePodCgroup(
  fs: CgroupFs,
  cgroupParent: string,
): Promise<void> {
  if (!cgroupParent.startsWith("/") || cgroupParent === "/") return;
  const hierarchies = await fs.readDirNames(CGROUP_MOUNT);
  const paths = [
    ...hierarchies.map((h) => `${CGROUP_MOUNT}/${h}${cgroupParent}`),
    `${CGROUP_MOUNT}${cgroupParent}`,
  ];
  let failure: unknown;
  for (const path of paths) {
    try {
      await fs.rmdir(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

/** What creating a pod cgroup needs from the cgroup file system. */
export interface CgroupWriter {
  exists(path: string): Promise<boolean>;
  /** Creates a directory and its missing parents; returns the ones it created, top first. */
  mkdirs(path: string): Promise<string[]>;
  writeTextFile(path: string, text: string): Promise<void>;
}

/** {@linkcode CgroupWriter} on the host. */
export const denoCgroupWriter: CgroupWriter = {
  async exists(path) {
    try {
      await Deno.stat(path);
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  },
  async mkdirs(path) {
    const created: string[] = [];
    const parts = path.split("/").filter((p) => p !== "");
    let current = "";
    for (const part of parts) {
      current += `/${part}`;
      try {
        await Deno.mkdir(current);
        created.push(current);
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      }
    }
    return created;
  },
  writeTextFile: (path, text) => Deno.writeTextFile(path, text),
};

/**
 * Creates the pod's cgroup in the cgroup v1 `cpu` and `memory` hierarchies with its settings
 * before the sandbox starts (upstream pod container manager `EnsureExists`, cgroupfs driver);
 * runc creates the other hierarchies' directories itself. A new `besteffort` QoS directory
 * gets the minimum CPU shares, as upstream's QoS container manager gives it. Does nothing when
 * the pod's cgroup exists already or the node runs cgroup v2 (`cgroup.controllers` at the
 * mount root).
 */
export async function ensurePodCgroup(
  fs: CgroupWriter,
  cgroupParent: string,
  config: PodCgroupConfig,
): Promise<void> {
  if (!cgroupParent.startsWith("/") || cgroupParent === "/") return;
  if (await fs.exists(`${CGROUP_MOUNT}/cgroup.controllers`)) return;
  const cpu = `${CGROUP_MOUNT}/cpu${cgroupParent}`;
  const memory = `${CGROUP_MOUNT}/memory${cgroupParent}`;
  if (await fs.exists(cpu) && await fs.exists(memory)) return;
  for (const dir of await fs.mkdirs(cpu)) {
    if (dir.endsWith("/kubepods/besteffort")) {
      await fs.writeTextFile(`${dir}/cpu.shares`, "2");
    }
  }
  await fs.writeTextFile(`${cpu}/cpu.shares`, String(config.cpuShares));
  if (config.cpuPeriod !== undefined) {
    await fs.writeTextFile(
      `${cpu}/cpu.cfs_period_us`,
      String(config.cpuPeriod),
    );
  }
  if (config.cpuQuota !== undefined && config.cpuQuota > 0) {
    await fs.writeTextFile(`${cpu}/cpu.cfs_quota_us`, String(config.cpuQuota));
  }
  await fs.mkdirs(memory);
  if (config.memoryLimit !== undefined && config.memoryLimit > 0) {
    await fs.writeTextFile(
      `${memory}/memory.limit_in_bytes`,
      String(config.memoryLimit),
    );
  }
}
