/** Builds CRI response messages from the simulated runtime's records. */

import { create } from "@bufbuild/protobuf";
import {
  type Container,
  ContainerSchema,
  ContainerState,
  type ContainerStats,
  ContainerStatsSchema,
  type ContainerStatus,
  ContainerStatusSchema,
  type Image,
  ImageSchema,
  NamespaceMode,
  type PodSandbox,
  PodSandboxSchema,
  PodSandboxState,
  type PodSandboxStats,
  PodSandboxStatsSchema,
  type PodSandboxStatus,
  PodSandboxStatusSchema,
} from "../gen/api_pb.ts";
import type { SimImage } from "./_images.ts";
import { type SimContainer, type SimSandbox, toNanos } from "./_state.ts";

const CONTAINER_STATES = {
  created: ContainerState.CONTAINER_CREATED,
  running: ContainerState.CONTAINER_RUNNING,
  exited: ContainerState.CONTAINER_EXITED,
} as const;

const DEFAULT_MEMORY = 8 * 1024 * 1024;

/** CRI state enum of a sim container. */
export function containerState(c: SimContainer): ContainerState {
  return CONTAINER_STATES[c.state];
}

/** CRI state enum of a sim sandbox. */
export function sandboxState(s: SimSandbox): PodSandboxState {
  return s.state === "ready"
    ? PodSandboxState.SANDBOX_READY
    : PodSandboxState.SANDBOX_NOTREADY;
}

/** `ListPodSandbox` item. */
export function toPodSandbox(s: SimSandbox): PodSandbox {
  return create(PodSandboxSchema, {
    id: s.id,
    metadata: s.metadata,
    state: sandboxState(s),
    createdAt: toNanos(s.createdAt),
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    runtimeHandler: s.runtimeHandler,
  });
}

/** `PodSandboxStatus.status`. The IP is gone once the sandbox is stopped. */
export function toPodSandboxStatus(s: SimSandbox): PodSandboxStatus {
  const node = NamespaceMode.NODE;
  return create(PodSandboxStatusSchema, {
    id: s.id,
    metadata: s.metadata,
    state: sandboxState(s),
    createdAt: toNanos(s.createdAt),
    network: { ip: s.state === "ready" ? s.ip : "" },
    linux: {
      namespaces: {
        options: {
          network: s.hostNetwork ? node : NamespaceMode.POD,
          pid: NamespaceMode.CONTAINER,
          ipc: NamespaceMode.POD,
        },
      },
    },
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    runtimeHandler: s.runtimeHandler,
  });
}

/** `ListContainers` item. */
export function toContainer(c: SimContainer): Container {
  return create(ContainerSchema, {
    id: c.id,
    podSandboxId: c.sandboxId,
    metadata: c.metadata,
    image: { image: c.image },
    imageRef: c.imageRef,
    state: containerState(c),
    createdAt: toNanos(c.createdAt),
    labels: { ...c.labels },
    annotations: { ...c.annotations },
  });
}

/** `ContainerStatus.status`; `image` is the image's first tag when known. */
export function toContainerStatus(
  c: SimContainer,
  image: SimImage | undefined,
): ContainerStatus {
  return create(ContainerStatusSchema, {
    id: c.id,
    metadata: c.metadata,
    state: containerState(c),
    createdAt: toNanos(c.createdAt),
    startedAt: c.startedAt ? toNanos(c.startedAt) : 0n,
    finishedAt: c.finishedAt ? toNanos(c.finishedAt) : 0n,
    exitCode: c.exitCode,
    image: { image: image?.repoTags[0] ?? c.image },
    imageRef: image?.repoDigests[0] ?? c.imageRef,
    reason: c.reason,
    message: c.message,
    labels: { ...c.labels },
    annotations: { ...c.annotations },
    mounts: c.mounts.map((m) => ({ ...m })),
    logPath: c.logPath,
    ...(c.resources ? { resources: { linux: { ...c.resources } } } : {}),
  });
}

/** `Image` message. */
export function toImage(image: SimImage): Image {
  return create(ImageSchema, {
    id: image.id,
    repoTags: [...image.repoTags],
    repoDigests: [...image.repoDigests],
    size: BigInt(image.size),
  });
}

/** Synthetic stats: CPU grows with running time, memory from the scenario. */
export function toContainerStats(c: SimContainer, now: number): ContainerStats {
  const ts = toNanos(now);
  const running = c.state === "running";
  const ranMs = c.startedAt
    ? Math.max(0, (c.finishedAt || now) - c.startedAt)
    : 0;
  const memory = running ? (c.behavior.memoryBytes ?? DEFAULT_MEMORY) : 0;
  return create(ContainerStatsSchema, {
    attributes: {
      id: c.id,
      metadata: c.metadata,
      labels: { ...c.labels },
      annotations: { ...c.annotations },
    },
    cpu: {
      timestamp: ts,
      // 1% of one core while running.
      usageCoreNanoSeconds: { value: BigInt(Math.round(ranMs)) * 10_000n },
      usageNanoCores: { value: running ? 10_000_000n : 0n },
    },
    memory: {
      timestamp: ts,
      workingSetBytes: { value: BigInt(memory) },
      usageBytes: { value: BigInt(memory) },
      rssBytes: { value: BigInt(memory) },
    },
    writableLayer: {
      timestamp: ts,
      fsId: { mountpoint: "/var/lib/kubelet-ts-sim/snapshots" },
      usedBytes: { value: 4096n },
      inodesUsed: { value: 1n },
    },
  });
}

/** Pod-level stats: the sum of its containers plus a process count. */
export function toPodSandboxStats(
  s: SimSandbox,
  containers: ContainerStats[],
  now: number,
): PodSandboxStats {
  const ts = toNanos(now);
  let cpu = 0n;
  let memory = 0n;
  for (const c of containers) {
    cpu += c.cpu?.usageCoreNanoSeconds?.value ?? 0n;
    memory += c.memory?.workingSetBytes?.value ?? 0n;
  }
  return create(PodSandboxStatsSchema, {
    attributes: {
      id: s.id,
      metadata: s.metadata,
      labels: { ...s.labels },
      annotations: { ...s.annotations },
    },
    linux: {
      cpu: { timestamp: ts, usageCoreNanoSeconds: { value: cpu } },
      memory: { timestamp: ts, workingSetBytes: { value: memory } },
      process: {
        timestamp: ts,
        processCount: { value: BigInt(containers.length + 1) },
      },
      containers,
    },
  });
}
