/**
 * Gathers what `/stats/summary` is made of: CRI `ListPodSandboxStats` (or, when the runtime
 * cannot answer it, `ListContainerStats` grouped by pod), the ready sandboxes and running
 * containers with their start times, CRI `ImageFsInfo`, `statfs` of the root dir and of the
 * image filesystem, and `Deno.systemMemoryInfo`. Figures that need a missing grant are left
 * out rather than failing the request.
 *
 * @module
 */

import { statfs } from "node:fs/promises";
import type { Clock } from "./clock/mod.ts";
import {
  type ImageService,
  RuntimeError,
  type RuntimeService,
} from "./runtime/mod.ts";
import {
  buildSummary,
  type CriPodSandboxStats,
  type FsFigures,
} from "./server/mod.ts";

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
}

const SANDBOX_READY = 0;
const CONTAINER_RUNNING = 1;

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
  const pods = await sandboxStats(runtime, ready);
  const image = imageFsInfo?.imageFilesystems[0];
  const imageFs = image?.fsId?.mountpoint
    ? await fsFigures(image.fsId.mountpoint)
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
  return buildSummary({
    nodeName: deps.nodeName,
    nowMs: deps.clock.now(),
    startTimeMs: deps.startTimeMs,
    ...(nodeMemory ? { nodeMemory } : {}),
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
    containerStartMs: new Map(
      containers.filter((c) => c.state === CONTAINER_RUNNING).map((
        c,
      ) => [c.id, ms(c.createdAt)]),
    ),
  });
}
