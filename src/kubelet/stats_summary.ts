/**
 * Gathers what `/stats/summary` is made of: CRI `ListPodSandboxStats` (or, when the runtime
 * cannot answer it, `ListContainerStats` grouped by pod), the ready sandboxes and running
 * containers with their start times, CRI `ImageFsInfo`, `statfs` of the root dir and of the
 * image filesystem, `Deno.systemMemoryInfo`, the system containers' cgroups, `/proc/net/dev`,
 * the task limit and the pods' volume directories. Figures that need a missing grant are
 * left out rather than failing the request.
 *
 * @module
 */

import { statfs } from "node:fs/promises";
import type { Clock } from "../clock/mod.ts";
import {
  type ImageService,
  RuntimeError,
  type RuntimeService,
} from "../runtime/mod.ts";
import {
  CONTAINER_NAME_LABEL,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_UID_LABEL,
  podLogDirectory,
} from "../pod/mod.ts";
import { directoryUsage } from "../util/directory_size.ts";
import {
  buildSummary,
  type CpuRates,
  type CriPodSandboxStats,
  fillUsageNanoCores,
  type FsFigures,
  type SystemContainerUsage,
} from "../server/mod.ts";
import { readPidFigures } from "../eviction/mod.ts";
import { type NodeUsageSource, readNodeUsage } from "./node_usage.ts";
import { type CgroupUsageFs, readCgroupUsage } from "./cgroup_usage.ts";
import { readHostNetwork } from "./host_network.ts";
import { podVolumesFs, readPodVolumes } from "./pod_volumes.ts";

/** What the summary reads. */
export interface StatsDeps {
  clock: Clock;
  runtime:
    & Pick<
      RuntimeService,
      | "listPodSandbox"
      | "listContainers"
      | "listPodSandboxStats"
      | "listContainerStats"
    >
    & Pick<ImageService, "imageFsInfo">;
  nodeName: string;
  /** `--root-dir`: its filesystem is the node's. */
  rootDir: string;
  /** When the kubelet started (ms). */
  startTimeMs: number;
  /** `podLogsDir`: the containers' log directories are below it. */
  podLogsDir?: string;
  /**
   * The host's files: the root cgroup (node CPU and memory), the system containers' cgroups,
   * `/proc`; omitted → not reported.
   */
  hostFiles?:
    & NodeUsageSource["fs"]
    & Pick<CgroupUsageFs, "modifiedMs">
    & { statfs?(path: string): Promise<FsFigures> };
  /** The previous CPU readings, kept between requests for `usageNanoCores`. */
  cpuRates: CpuRates;
  /** The system containers' cgroups (absolute, cgroupfs form) by summary name. */
  systemCgroups?: ReadonlyArray<{ name: string; cgroup: string }>;
}

/** The system containers' figures, each with its CPU rate from the previous request. */
async function systemContainers(
  deps: StatsDeps,
): Promise<{ name: string; usage: SystemContainerUsage }[]> {
  const fs = deps.hostFiles;
  if (!fs) return [];
  const read = await Promise.all(
    (deps.systemCgroups ?? []).map(async ({ name, cgroup }) => ({
      name,
      cgroup,
      usage: await readCgroupUsage(fs, cgroup, () => deps.clock.now())
        .catch(() => undefined),
    })),
  );
  return read.flatMap(({ name, cgroup, usage }) => {
    if (!usage) return [];
    const rate = usage.cpuCoreNanoSeconds === undefined
      ? undefined
      : deps.cpuRates.observe(systemKey(cgroup), {
        timestampNs: BigInt(usage.timeMs) * 1_000_000n,
        usageCoreNanoSeconds: BigInt(usage.cpuCoreNanoSeconds),
      });
    return [{
      name,
      usage: rate === undefined ? usage : { ...usage, cpuNanoCores: rate },
    }];
  });
}

/** The key of a system container's readings in {@linkcode StatsDeps.cpuRates}. */
function systemKey(cgroup: string): string {
  return `system:${cgroup}`;
}

/** The key of the root cgroup's readings in {@linkcode StatsDeps.cpuRates}. */
const ROOT_CGROUP = "/";

const SANDBOX_READY = 0;

/**
 * What each running container's log directory uses (apparent file sizes), by container ID;
 * a container whose directory cannot be read is left out.
 */
async function containerLogUsage(
  podLogsDir: string,
  containers: readonly { id: string; labels: Record<string, string> }[],
): Promise<Map<string, { usedBytes: number; inodesUsed: number }>> {
  const out = new Map<string, { usedBytes: number; inodesUsed: number }>();
  await Promise.all(containers.map(async (c) => {
    const l = c.labels;
    const pod = podLogDirectory(podLogsDir, {
      metadata: {
        namespace: l[POD_NAMESPACE_LABEL] ?? "",
        name: l[POD_NAME_LABEL] ?? "",
        uid: l[POD_UID_LABEL] ?? "",
      },
      spec: { containers: [] },
    });
    try {
      const u = await directoryUsage(`${pod}/${l[CONTAINER_NAME_LABEL]}`);
      out.set(c.id, { usedBytes: u.bytes, inodesUsed: u.inodes });
    } catch {
      // unreadable (no grant): left out
    }
  }));
  return out;
}
const CONTAINER_RUNNING = 1;

/** The size and free figures of a `statfs` answer that carries more. */
function figuresOnly(f: FsFigures): FsFigures {
  return {
    capacityBytes: f.capacityBytes,
    availableBytes: f.availableBytes,
    inodes: f.inodes,
    inodesFree: f.inodesFree,
  };
}

/** `statfs` of the filesystem holding `path`; undefined when it cannot be read. */
export async function fsFigures(path: string): Promise<FsFigures | undefined> {
  try {
    const s = await statfs(path);
    return {
      capacityBytes: Number(s.blocks) * Number(s.bsize),
      availableBytes: Number(s.bavail) * Number(s.bsize),
      inodes: Number(s.files),
      inodesFree: Number(s.ffree),
    };
  } catch {
    return undefined;
  }
}

/**
 * Sandbox stats, or container stats grouped into stand-in sandbox stats when the runtime has
 * no `ListPodSandboxStats` or fails it: containerd 1.6 fails the whole list when one
 * sandbox has no cgroup path ("cgroupPath is empty").
 */
async function sandboxStats(
  runtime: StatsDeps["runtime"],
  sandboxes: ReadonlyArray<
    {
      id: string;
      metadata?: { name: string; uid: string; namespace: string } | undefined;
    }
  >,
): Promise<CriPodSandboxStats[]> {
  try {
    return (await runtime.listPodSandboxStats({})).stats;
  } catch (error) {
    if (!(error instanceof RuntimeError)) throw error;
  }
  const { stats } = await runtime.listContainerStats({});
  return sandboxes.map((s) => ({
    attributes: { id: s.id, metadata: s.metadata },
    linux: {
      containers: stats.filter((c) =>
        c.attributes?.labels["io.kubernetes.pod.uid"] === s.metadata?.uid
      ),
    },
  }));
}

/** The `/stats/summary` document of the node now. */
export async function statsSummary(
  deps: StatsDeps,
): Promise<Record<string, unknown>> {
  const { runtime } = deps;
  const [{ items }, { containers }, imageFsInfo, nodeFs] = await Promise.all([
    runtime.listPodSandbox({ filter: { state: { state: SANDBOX_READY } } }),
    runtime.listContainers({
      filter: { state: { state: CONTAINER_RUNNING } },
    }),
    runtime.imageFsInfo({}).catch(() => undefined),
    fsFigures(deps.rootDir),
  ]);
  const ready = items.filter((s) => s.state === SANDBOX_READY);
  const pods = fillUsageNanoCores(
    await sandboxStats(runtime, ready),
    deps.cpuRates,
    [
      ROOT_CGROUP,
      ...(deps.systemCgroups ?? []).map((c) => systemKey(c.cgroup)),
    ],
  );
  const now = () => deps.clock.now();
  const host = deps.hostFiles;
  const [system, nodeNetwork, pids, podVolumes] = await Promise.all([
    systemContainers(deps),
    host ? readHostNetwork(host, now) : undefined,
    host ? readPidFigures(host).catch(() => undefined) : undefined,
    readPodVolumes(
      podVolumesFs(fsFigures),
      deps.rootDir,
      ready.flatMap((s) => s.metadata?.uid ?? []),
      now,
    ),
  ]);
  const nodeUsage = deps.hostFiles
    ? await readNodeUsage({
      fs: deps.hostFiles,
      memory: () => Deno.systemMemoryInfo(),
      now: () => deps.clock.now(),
    }).catch(() => undefined)
    : undefined;
  const nodeCpuNanoCores = nodeUsage?.cpuCoreNanoSeconds === undefined
    ? undefined
    : deps.cpuRates.observe(ROOT_CGROUP, {
      timestampNs: BigInt(nodeUsage.timeMs) * 1_000_000n,
      usageCoreNanoSeconds: BigInt(nodeUsage.cpuCoreNanoSeconds),
    });
  const image = imageFsInfo?.imageFilesystems[0];
  // the runtime's root is outside the kubelet's read grants: the cgroup agent's statfs then
  const mountpoint = image?.fsId?.mountpoint;
  const imageFs = mountpoint
    ? await fsFigures(mountpoint) ??
      await deps.hostFiles?.statfs?.(mountpoint).then(figuresOnly, () =>
        undefined)
    : undefined;
  let nodeMemory;
  try {
    const m = Deno.systemMemoryInfo();
    nodeMemory = {
      totalBytes: m.total,
      freeBytes: m.free,
      availableBytes: m.available,
    };
  } catch {
    // no sys grant: left out
  }
  const ms = (ns: bigint) => Number(ns / 1_000_000n);
  const running = containers.filter((c) => c.state === CONTAINER_RUNNING);
  const containerLogs = deps.podLogsDir
    ? await containerLogUsage(deps.podLogsDir, running)
    : undefined;
  return buildSummary({
    nodeName: deps.nodeName,
    nowMs: deps.clock.now(),
    startTimeMs: deps.startTimeMs,
    ...(nodeMemory ? { nodeMemory } : {}),
    ...(nodeUsage
      ? {
        nodeUsage: {
          ...nodeUsage,
          ...(nodeCpuNanoCores !== undefined
            ? { cpuNanoCores: nodeCpuNanoCores }
            : {}),
        },
      }
      : {}),
    ...(nodeFs ? { nodeFs } : {}),
    ...(imageFs
      ? {
        imageFs: {
          ...imageFs,
          ...(image?.usedBytes
            ? { usedBytes: Number(image.usedBytes.value) }
            : {}),
          ...(image?.inodesUsed
            ? { inodesUsed: Number(image.inodesUsed.value) }
            : {}),
        },
      }
      : {}),
    pods,
    sandboxStartMs: new Map(ready.map((s) => [s.id, ms(s.createdAt)])),
    containerStartMs: new Map(running.map((c) => [c.id, ms(c.createdAt)])),
    ...(containerLogs ? { containerLogs } : {}),
    ...(system.length ? { systemContainers: system } : {}),
    ...(nodeNetwork ? { nodeNetwork } : {}),
    ...(pids
      ? { rlimit: { timeMs: now(), maxpid: pids.max, curproc: pids.running } }
      : {}),
    podVolumes,
  });
}
