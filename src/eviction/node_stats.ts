/**
 * Reads what one eviction pass needs: the root and kubepods memory cgroups, `/proc`, statfs
 * of the root dir and of the runtime's image filesystem (through {@linkcode HostFiles}: the
 * kubelet itself with every permission, else the cgroup agent), and per pod the CRI container
 * stats, log directories and emptyDir directories. A figure that cannot be read is left out,
 * so its signal is not observed (as upstream, when the summary lacks it).
 * @module
 */
import type { HostFiles, Pod } from "../pod/mod.ts";
import { podLogDirectory } from "../pod/mod.ts";
import type { CriRuntime } from "../runtime/mod.ts";
import { directoryUsage } from "../util/directory_size.ts";
import { statValue, workingSet } from "../util/cgroup_stat.ts";
import {
  type FsFigures,
  memoryLimit,
  type NodeStats,
  threadsRunning,
} from "./observe.ts";
import type { ContainerUsage, PodUsage } from "./rank.ts";

const CGROUP = "/sys/fs/cgroup";

/** Where the node's figures come from. */
export interface NodeStatsDeps {
  host: HostFiles | undefined;
  runtime: Pick<CriRuntime, "listContainerStats" | "imageFsInfo">;
  /** Machine memory (`Deno.systemMemoryInfo().total`, as cadvisor's MemTotal). */
  memoryCapacity: () => number;
  /**
   * The root cgroup's memory working set, read as the stats endpoints read it (one reader,
   * so a threshold acts on the figure `/stats/summary` shows); undefined when unreadable.
   */
  rootWorkingSet: () => Promise<number | undefined>;
  now: () => number;
}

/** Paths of {@linkcode readNodeStats}. */
export interface NodeStatsOptions {
  rootDir: string;
  podLogsDir: string;
  /** `<cgroupRoot>/kubepods` in cgroupfs form, e.g. `/kubepods`. */
  kubepods: string;
}

async function maybe<T>(f: () => Promise<T>): Promise<T | undefined> {
  try {
    return await f();
  } catch {
    return undefined;
  }
}

/** The cgroup version of the host's mount, undefined when it cannot be read. */
async function cgroupVersion(
  host: HostFiles,
): Promise<"v1" | "v2" | undefined> {
  if (await maybe(() => host.readTextFile(`${CGROUP}/cgroup.controllers`))) {
    return "v2";
  }
  return await maybe(() =>
      host.readTextFile(`${CGROUP}/memory/memory.usage_in_bytes`)
    )
    ? "v1"
    : undefined;
}

async function kubepodsMemory(
  host: HostFiles,
  version: "v1" | "v2",
  kubepods: string,
): Promise<NonNullable<NodeStats["allocatable"]>> {
  const dir = version === "v1"
    ? `${CGROUP}/memory${kubepods}`
    : `${CGROUP}${kubepods}`;
  const [usage, stat, limit] = await Promise.all([
    host.readTextFile(
      `${dir}/${version === "v1" ? "memory.usage_in_bytes" : "memory.current"}`,
    ),
    host.readTextFile(`${dir}/memory.stat`),
    host.readTextFile(
      `${dir}/${version === "v1" ? "memory.limit_in_bytes" : "memory.max"}`,
    ),
  ]);
  const inactive = statValue(
    stat,
    version === "v1" ? "total_inactive_file" : "inactive_file",
  ) ?? 0;
  return {
    limitBytes: memoryLimit(limit),
    workingSetBytes: workingSet(Number(usage), inactive),
  };
}

/**
 * The node's task limit (`min(kernel.pid_max, kernel.threads-max)`) and the threads running
 * (`/proc/loadavg`), as upstream `pidlimit.Stats`; also `/stats/summary`'s `rlimit`.
 */
export async function readPidFigures(
  host: Pick<HostFiles, "readTextFile">,
): Promise<NonNullable<NodeStats["pids"]> | undefined> {
  const pidMax = Number(await host.readTextFile("/proc/sys/kernel/pid_max"));
  const threadsMax = await maybe(async () =>
    Number(await host.readTextFile("/proc/sys/kernel/threads-max"))
  );
  const running = threadsRunning(await host.readTextFile("/proc/loadavg"));
  if (!Number.isFinite(pidMax) || running === undefined) return undefined;
  const max = threadsMax !== undefined && threadsMax < pidMax
    ? threadsMax
    : pidMax;
  return { max, running };
}

function fsOf(f: FsFigures & { device: number }): FsFigures {
  return {
    capacityBytes: f.capacityBytes,
    availableBytes: f.availableBytes,
    inodes: f.inodes,
    inodesFree: f.inodesFree,
  };
}

/** The node's figures now, and whether the image filesystem is on its own device. */
export async function readNodeStats(
  deps: NodeStatsDeps,
  options: NodeStatsOptions,
): Promise<{ stats: NodeStats; dedicatedImageFs: boolean }> {
  const stats: NodeStats = { timeMs: deps.now() };
  const host = deps.host;
  let dedicatedImageFs = false;
  if (host) {
    const version = await cgroupVersion(host);
    if (version) {
      const ws = await maybe(deps.rootWorkingSet);
      if (ws !== undefined) {
        stats.memory = {
          capacityBytes: deps.memoryCapacity(),
          workingSetBytes: ws,
        };
      }
      const pods = await maybe(() =>
        kubepodsMemory(host, version, options.kubepods)
      );
      if (pods) stats.allocatable = pods;
    }
    const pids = await maybe(() => readPidFigures(host));
    if (pids) stats.pids = pids;
    const node = await maybe(() => host.statfs(options.rootDir));
    if (node) stats.nodeFs = fsOf(node);
    const mount = await maybe(async () =>
      (await deps.runtime.imageFsInfo({})).imageFilesystems[0]?.fsId
        ?.mountpoint
    );
    const image = mount ? await maybe(() => host.statfs(mount)) : undefined;
    if (image) {
      stats.imageFs = fsOf(image);
      dedicatedImageFs = node !== undefined && node.device !== image.device;
    }
  }
  return { stats, dedicatedImageFs };
}

/** Per pod UID: memory, writable layers, logs and local volumes. */
export async function readPodUsage(
  deps: Pick<NodeStatsDeps, "runtime">,
  pods: readonly Pod[],
  options: Pick<NodeStatsOptions, "rootDir" | "podLogsDir">,
): Promise<Map<string, PodUsage>> {
  const { stats } = await deps.runtime.listContainerStats({});
  const out = new Map<string, PodUsage>();
  for (const pod of pods) {
    const uid = pod.metadata.uid ?? "";
    const mine = stats.filter((s) =>
      s.attributes?.labels["io.kubernetes.pod.uid"] === uid
    );
    if (mine.length === 0) continue;
    const logs = podLogDirectory(options.podLogsDir, pod);
    const containers: ContainerUsage[] = [];
    let memory = 0;
    for (const s of mine) {
      const name = s.attributes?.metadata?.name ?? "";
      const ws = s.memory?.workingSetBytes?.value;
      if (ws !== undefined) memory += Number(ws);
      const logged = await maybe(() => directoryUsage(`${logs}/${name}`));
      containers.push({
        name,
        ...(ws !== undefined ? { memoryBytes: Number(ws) } : {}),
        ...(s.writableLayer?.usedBytes
          ? { rootfsBytes: Number(s.writableLayer.usedBytes.value) }
          : {}),
        ...(s.writableLayer?.inodesUsed
          ? { rootfsInodes: Number(s.writableLayer.inodesUsed.value) }
          : {}),
        ...(logged
          ? { logsBytes: logged.bytes, logsInodes: logged.inodes }
          : {}),
      });
    }
    const volumes = new Map<string, { bytes: number; inodes: number }>();
    for (const v of pod.spec.volumes ?? []) {
      if (!v.emptyDir) continue;
      const dir =
        `${options.rootDir}/pods/${uid}/volumes/kubernetes.io~empty-dir/${v.name}`;
      const used = await maybe(() => directoryUsage(dir, { self: true }));
      if (used) volumes.set(v.name, used);
    }
    out.set(uid, { memoryBytes: memory, containers, volumes });
  }
  return out;
}
