/**
 * The `/stats/summary` document (upstream `statsapi.Summary`, k8s.io/kubelet
 * pkg/apis/stats/v1alpha1) from CRI stats and the node's own figures, as a pure conversion.
 * The input types are the fields of CRI's `PodSandboxStats`/`ContainerStats` messages that
 * are read, so generated messages fit them as they are.
 *
 * Node CPU and memory come from the root cgroup, system containers from their cgroups, node
 * network and rlimit from `/proc`, when they could be read; what is not measured is left out,
 * as the JSON's `omitempty` fields allow.
 *
 * @module
 */

/** CRI `UInt64Value`. */
export interface CriUInt64 {
  value: bigint;
}

/** The CPU fields read from CRI `CpuUsage`. */
export interface CriCpu {
  timestamp: bigint;
  usageCoreNanoSeconds?: CriUInt64 | undefined;
  usageNanoCores?: CriUInt64 | undefined;
}

/** The memory fields read from CRI `MemoryUsage`. */
export interface CriMemory {
  timestamp: bigint;
  workingSetBytes?: CriUInt64 | undefined;
  availableBytes?: CriUInt64 | undefined;
  usageBytes?: CriUInt64 | undefined;
  rssBytes?: CriUInt64 | undefined;
  pageFaults?: CriUInt64 | undefined;
  majorPageFaults?: CriUInt64 | undefined;
}

/** CRI `FilesystemUsage` (a container's writable layer). */
export interface CriFsUsage {
  timestamp: bigint;
  usedBytes?: CriUInt64 | undefined;
  inodesUsed?: CriUInt64 | undefined;
}

/** CRI `NetworkInterfaceUsage`. */
export interface CriInterface {
  name: string;
  rxBytes?: CriUInt64 | undefined;
  rxErrors?: CriUInt64 | undefined;
  txBytes?: CriUInt64 | undefined;
  txErrors?: CriUInt64 | undefined;
}

/** CRI `NetworkUsage`. */
export interface CriNetwork {
  timestamp: bigint;
  defaultInterface?: CriInterface | undefined;
  interfaces: readonly CriInterface[];
}

/** CRI `ContainerStats`. */
export interface CriContainerStats {
  attributes?: {
    id: string;
    metadata?: { name: string } | undefined;
    labels: Readonly<Record<string, string>>;
  } | undefined;
  cpu?: CriCpu | undefined;
  memory?: CriMemory | undefined;
  writableLayer?: CriFsUsage | undefined;
}

/** CRI `PodSandboxStats` (the Linux half). */
export interface CriPodSandboxStats {
  attributes?: {
    id: string;
    metadata?: { name: string; uid: string; namespace: string } | undefined;
  } | undefined;
  linux?: {
    cpu?: CriCpu | undefined;
    memory?: CriMemory | undefined;
    network?: CriNetwork | undefined;
    process?: {
      timestamp: bigint;
      processCount?: CriUInt64 | undefined;
    } | undefined;
    containers: readonly CriContainerStats[];
  } | undefined;
}

/** A filesystem's figures from `statfs`. */
export interface FsFigures {
  capacityBytes: number;
  availableBytes: number;
  inodes: number;
  inodesFree: number;
}

/**
 * The root cgroup's figures (cAdvisor's "/" container, upstream's node CPU and memory);
 * a figure that could not be read is absent.
 */
export interface RootUsage {
  /** When the files were read (ms). */
  timeMs: number;
  cpuCoreNanoSeconds?: number;
  /** The rate since the previous reading; absent on the first. */
  cpuNanoCores?: number;
  memoryUsageBytes?: number;
  memoryWorkingSetBytes?: number;
  memoryRssBytes?: number;
  memoryPageFaults?: number;
  memoryMajorPageFaults?: number;
}

/** A system container's cgroup figures (cAdvisor's view of a cgroup). */
export interface SystemContainerUsage extends Omit<RootUsage, "cpuNanoCores"> {
  /** The cgroup directory's modification time (ms), cAdvisor's creation time. */
  startMs: number;
  cpuNanoCores?: number;
  /** The cgroup's memory limit, when it has one. */
  memoryLimitBytes?: number;
}

/** One network interface's kernel counters. */
export interface InterfaceCounters {
  name: string;
  rxBytes: number;
  rxErrors: number;
  txBytes: number;
  txErrors: number;
}

/** What one pod volume uses, and its filesystem's figures when they could be read. */
export interface VolumeUsage {
  name: string;
  timeMs: number;
  usedBytes: number;
  inodesUsed: number;
  fs?: FsFigures;
  /** On the node's disk with the pod's lifetime: counted in its ephemeral storage. */
  localEphemeral?: boolean;
}

/** Everything the summary is made of. */
export interface SummaryInput {
  nodeName: string;
  nowMs: number;
  /** When collection started: the kubelet's start (the boot time needs `/proc`). */
  startTimeMs: number;
  /** `Deno.systemMemoryInfo()` figures; omitted without the grant. */
  nodeMemory?: {
    totalBytes: number;
    freeBytes: number;
    availableBytes: number;
  };
  /** The root cgroup's usage: node CPU, and memory in place of `nodeMemory`'s guess. */
  nodeUsage?: RootUsage;
  /** The filesystem of `--root-dir`. */
  nodeFs?: FsFigures;
  /** The runtime's image filesystem: `statfs` of its mount point and CRI `ImageFsInfo`. */
  imageFs?: FsFigures & { usedBytes?: number; inodesUsed?: number };
  /** Ready sandboxes, each with its containers' stats. */
  pods: readonly CriPodSandboxStats[];
  /** Start times (ms) of the ready sandboxes by ID; others are left out. */
  sandboxStartMs: ReadonlyMap<string, number>;
  /** Start times (ms) of the running containers by ID; others are left out. */
  containerStartMs: ReadonlyMap<string, number>;
  /** What each running container's log directory uses, by container ID. */
  containerLogs?: ReadonlyMap<
    string,
    { usedBytes: number; inodesUsed: number }
  >;
  /** System containers by summary name (`kubelet`, `runtime`, `misc`, `pods`). */
  systemContainers?: ReadonlyArray<
    { name: string; usage: SystemContainerUsage }
  >;
  /** The host network namespace's interfaces. */
  nodeNetwork?: { timeMs: number; interfaces: readonly InterfaceCounters[] };
  /** The node's task limit and the tasks running. */
  rlimit?: { timeMs: number; maxpid: number; curproc: number };
  /** Measured volumes by pod UID. */
  podVolumes?: ReadonlyMap<string, readonly VolumeUsage[]>;
}

/** The interface upstream's summary names as the default one (`network.DefaultInterfaceName`). */
const DEFAULT_INTERFACE = "eth0";

/** `metav1.Time`: RFC 3339 in UTC, whole seconds. */
export function apiTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function nsTime(ns: bigint): string {
  return apiTime(Number(ns / 1_000_000n));
}

function num(v: CriUInt64 | undefined): number | undefined {
  return v === undefined ? undefined : Number(v.value);
}

/** Drops undefined fields (Go's `omitempty` on pointers). */
function compact<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(
    Object.entries(o).filter(([, v]) => v !== undefined),
  ) as T;
}

type Json = Record<string, unknown>;

function cpuStats(cpu: CriCpu | undefined): Json | undefined {
  if (!cpu) return undefined;
  return compact({
    time: nsTime(cpu.timestamp),
    usageNanoCores: num(cpu.usageNanoCores),
    usageCoreNanoSeconds: num(cpu.usageCoreNanoSeconds),
  });
}

function memoryStats(memory: CriMemory | undefined): Json | undefined {
  if (!memory) return undefined;
  return compact({
    time: nsTime(memory.timestamp),
    availableBytes: num(memory.availableBytes),
    usageBytes: num(memory.usageBytes),
    workingSetBytes: num(memory.workingSetBytes),
    rssBytes: num(memory.rssBytes),
    pageFaults: num(memory.pageFaults),
    majorPageFaults: num(memory.majorPageFaults),
  });
}

function interfaceStats(i: CriInterface): Json {
  return compact({
    name: i.name,
    rxBytes: num(i.rxBytes),
    rxErrors: num(i.rxErrors),
    txBytes: num(i.txBytes),
    txErrors: num(i.txErrors),
  });
}

/**
 * The pod's network. containerd 1.6 gives only the default interface, with no time: the
 * time is then when the summary was made, and the interface list (upstream's, from
 * cAdvisor, holds the default interface too) is that one interface.
 */
function networkStats(
  network: CriNetwork | undefined,
  nowMs: number,
): Json | undefined {
  if (!network) return undefined;
  const interfaces = network.interfaces.length
    ? network.interfaces
    : network.defaultInterface
    ? [network.defaultInterface]
    : [];
  return {
    time: network.timestamp > 0n ? nsTime(network.timestamp) : apiTime(nowMs),
    ...(network.defaultInterface
      ? interfaceStats(network.defaultInterface)
      : {}),
    ...(interfaces.length
      ? { interfaces: interfaces.map(interfaceStats) }
      : {}),
  };
}

function fsStats(
  timeMs: number,
  fs: FsFigures | undefined,
  used: { usedBytes?: number | undefined; inodesUsed?: number | undefined },
): Json {
  return compact({
    time: apiTime(timeMs),
    availableBytes: fs?.availableBytes,
    capacityBytes: fs?.capacityBytes,
    usedBytes: used.usedBytes,
    inodesFree: fs?.inodesFree,
    inodes: fs?.inodes,
    inodesUsed: used.inodesUsed,
  });
}

/** Sums a figure over containers; undefined when no container has it. */
function sum(values: ReadonlyArray<number | undefined>): number | undefined {
  const present = values.filter((v): v is number => v !== undefined);
  return present.length ? present.reduce((a, b) => a + b, 0) : undefined;
}

function containerStats(
  c: CriContainerStats,
  startMs: number,
  input: SummaryInput,
): Json {
  const layer = c.writableLayer;
  const logs = input.containerLogs?.get(c.attributes?.id ?? "");
  return compact({
    name: c.attributes?.metadata?.name ??
      c.attributes?.labels["io.kubernetes.container.name"] ?? "",
    startTime: apiTime(startMs),
    cpu: cpuStats(c.cpu),
    memory: memoryStats(c.memory),
    rootfs: layer
      ? fsStats(Number(layer.timestamp / 1_000_000n), input.imageFs, {
        usedBytes: num(layer.usedBytes),
        inodesUsed: num(layer.inodesUsed),
      })
      : undefined,
    // the log files' usage on the node's filesystem, as upstream reports it
    logs: logs ? fsStats(input.nowMs, input.nodeFs, logs) : undefined,
  });
}

/**
 * A pod's CPU or memory from its containers, when the sandbox reports none (upstream
 * `addPodCPUMemoryStats` sums them); a figure no container has is left out.
 */
function summed(
  containers: readonly CriContainerStats[],
): { cpu?: Json; memory?: Json } {
  const total = (pick: (c: CriContainerStats) => CriUInt64 | undefined) =>
    sum(containers.map((c) => num(pick(c))));
  // the latest reading's time, as upstream keeps the last container's
  const latest = (times: ReadonlyArray<bigint | undefined>) => {
    const present = times.filter((t): t is bigint => t !== undefined);
    return present.length
      ? nsTime(present.reduce((a, b) => a > b ? a : b))
      : undefined;
  };
  const withCpu = containers.filter((c) => c.cpu);
  const withMemory = containers.filter((c) => c.memory);
  return {
    ...(withCpu.length
      ? {
        cpu: compact({
          time: latest(withCpu.map((c) => c.cpu?.timestamp)),
          usageNanoCores: total((c) => c.cpu?.usageNanoCores),
          usageCoreNanoSeconds: total((c) => c.cpu?.usageCoreNanoSeconds),
        }),
      }
      : {}),
    ...(withMemory.length
      ? {
        memory: compact({
          time: latest(withMemory.map((c) => c.memory?.timestamp)),
          availableBytes: total((c) => c.memory?.availableBytes),
          usageBytes: total((c) => c.memory?.usageBytes),
          workingSetBytes: total((c) => c.memory?.workingSetBytes),
          rssBytes: total((c) => c.memory?.rssBytes),
          pageFaults: total((c) => c.memory?.pageFaults),
          majorPageFaults: total((c) => c.memory?.majorPageFaults),
        }),
      }
      : {}),
  };
}

function podStats(
  pod: CriPodSandboxStats,
  input: SummaryInput,
): Json | undefined {
  const id = pod.attributes?.id ?? "";
  const start = input.sandboxStartMs.get(id);
  const meta = pod.attributes?.metadata;
  if (start === undefined || !meta) return undefined;
  const running = (pod.linux?.containers ?? []).filter((c) =>
    input.containerStartMs.has(c.attributes?.id ?? "")
  );
  const containers = running.map((c) =>
    containerStats(
      c,
      input.containerStartMs.get(c.attributes?.id ?? "")!,
      input,
    )
  );
  const fromContainers = summed(running);
  const process = pod.linux?.process?.processCount;
  const rootfsUsed = sum(running.map((c) => num(c.writableLayer?.usedBytes)));
  const rootfsInodes = sum(
    running.map((c) => num(c.writableLayer?.inodesUsed)),
  );
  // upstream `calcEphemeralStorage`: the writable layers, the logs and the local ephemeral
  // volumes together
  const extra = [
    { usedBytes: 0, inodesUsed: 0 },
    ...running.flatMap((c) =>
      input.containerLogs?.get(c.attributes?.id ?? "") ?? []
    ),
    ...(input.podVolumes?.get(meta.uid) ?? []).filter((v) => v.localEphemeral),
  ];
  return compact({
    podRef: { name: meta.name, namespace: meta.namespace, uid: meta.uid },
    startTime: apiTime(start),
    containers,
    cpu: cpuStats(pod.linux?.cpu) ?? fromContainers.cpu,
    memory: memoryStats(pod.linux?.memory) ?? fromContainers.memory,
    network: networkStats(pod.linux?.network, input.nowMs),
    volume: volumeStats(input.podVolumes?.get(meta.uid)),
    "ephemeral-storage": rootfsUsed !== undefined
      ? fsStats(input.nowMs, input.nodeFs, {
        usedBytes: rootfsUsed + sum(extra.map((e) => e.usedBytes))!,
        inodesUsed: (rootfsInodes ?? 0) + sum(extra.map((e) => e.inodesUsed))!,
      })
      : undefined,
    process_stats: process
      ? { process_count: Number(process.value) }
      : undefined,
  });
}

/** A pod's measured volumes (upstream `VolumeStats`: the filesystem figures and a name). */
function volumeStats(
  volumes: readonly VolumeUsage[] | undefined,
): Json[] | undefined {
  if (!volumes?.length) return undefined;
  return volumes.map((v) => ({
    ...fsStats(v.timeMs, v.fs, v),
    name: v.name,
  }));
}

/**
 * A system container (upstream `cadvisorInfoToContainerStats` of a cgroup): its CPU and
 * memory, `availableBytes` only when the cgroup has a memory limit.
 */
function systemContainer(name: string, u: SystemContainerUsage): Json {
  return compact({
    name,
    startTime: apiTime(u.startMs),
    cpu: cgroupCpu(u),
    memory: u.memoryUsageBytes === undefined
      ? undefined
      : cgroupMemory(u, u.memoryLimitBytes),
  });
}

/** A cgroup's CPU figures as cAdvisor gives them; none without its CPU time. */
function cgroupCpu(u: RootUsage): Json | undefined {
  if (u.cpuCoreNanoSeconds === undefined) return undefined;
  return compact({
    time: apiTime(u.timeMs),
    usageNanoCores: u.cpuNanoCores,
    usageCoreNanoSeconds: u.cpuCoreNanoSeconds,
  });
}

/** A cgroup's memory figures; `availableBytes` is the limit less the working set, if any. */
function cgroupMemory(u: RootUsage, limitBytes: number | undefined): Json {
  return compact({
    time: apiTime(u.timeMs),
    availableBytes:
      limitBytes !== undefined && u.memoryWorkingSetBytes !== undefined
        ? Math.max(0, limitBytes - u.memoryWorkingSetBytes)
        : undefined,
    usageBytes: u.memoryUsageBytes,
    workingSetBytes: u.memoryWorkingSetBytes,
    rssBytes: u.memoryRssBytes,
    pageFaults: u.memoryPageFaults,
    majorPageFaults: u.memoryMajorPageFaults,
  });
}

/**
 * The node's network (upstream `cadvisorInfoToNetworkStats`): every interface in the list,
 * and `eth0`'s counters as the default when the node has one (else none).
 */
function nodeNetwork(input: SummaryInput): Json | undefined {
  const n = input.nodeNetwork;
  if (!n) return undefined;
  const main = n.interfaces.find((i) => i.name === DEFAULT_INTERFACE);
  return {
    time: apiTime(n.timeMs),
    ...(main ? { ...main } : {}),
    interfaces: n.interfaces.map((i) => ({ ...i })),
  };
}

function nodeCpu(input: SummaryInput): Json | undefined {
  return input.nodeUsage ? cgroupCpu(input.nodeUsage) : undefined;
}

/**
 * The node's memory: the root cgroup's figures as cAdvisor gives them, whose limit is the
 * machine's memory (so available is that less the working set); without them, what
 * `/proc/meminfo` alone tells.
 */
function nodeMemory(input: SummaryInput): Json | undefined {
  const u = input.nodeUsage;
  const m = input.nodeMemory;
  if (u?.memoryWorkingSetBytes !== undefined) {
    return cgroupMemory(u, m?.totalBytes);
  }
  if (!m) return undefined;
  return {
    time: apiTime(input.nowMs),
    availableBytes: m.availableBytes,
    usageBytes: m.totalBytes - m.freeBytes,
    workingSetBytes: m.totalBytes - m.availableBytes,
  };
}

/** The whole summary (upstream `GetSummary`). */
export function buildSummary(input: SummaryInput): Json {
  const { nowMs } = input;
  const node = compact({
    nodeName: input.nodeName,
    startTime: apiTime(input.startTimeMs),
    cpu: nodeCpu(input),
    memory: nodeMemory(input),
    fs: input.nodeFs
      ? fsStats(nowMs, input.nodeFs, {
        usedBytes: input.nodeFs.capacityBytes - input.nodeFs.availableBytes,
        inodesUsed: input.nodeFs.inodes - input.nodeFs.inodesFree,
      })
      : undefined,
    network: nodeNetwork(input),
    runtime: input.imageFs ? runtimeFs(nowMs, input.imageFs) : undefined,
    rlimit: input.rlimit
      ? {
        time: apiTime(input.rlimit.timeMs),
        maxpid: input.rlimit.maxpid,
        curproc: input.rlimit.curproc,
      }
      : undefined,
    systemContainers: input.systemContainers?.length
      ? input.systemContainers.map((c) => systemContainer(c.name, c.usage))
      : undefined,
  });
  const pods = input.pods.flatMap((p) => podStats(p, input) ?? []);
  return { node, pods };
}

/**
 * The runtime's filesystems: containers' writable layers live with the images unless the
 * runtime names a filesystem of their own (containerd 1.6 does not), so upstream reports the
 * image filesystem as `containerFs` too.
 */
function runtimeFs(
  nowMs: number,
  imageFs: NonNullable<SummaryInput["imageFs"]>,
): Record<string, unknown> {
  const figures = fsStats(nowMs, imageFs, {
    usedBytes: imageFs.usedBytes,
    inodesUsed: imageFs.inodesUsed,
  });
  return { imageFs: figures, containerFs: figures };
}

/**
 * The `only_cpu_and_memory=true` subset (upstream `GetCPUAndMemoryStats`): node, pod and
 * container CPU and memory with their names and start times.
 */
export function cpuAndMemoryOnly(summary: Json): Json {
  const pick = (o: Json, keys: readonly string[]) =>
    compact(Object.fromEntries(keys.map((k) => [k, o[k]])));
  const node = summary.node as Json;
  const pods = summary.pods as Json[];
  return {
    node: {
      ...pick(node, ["nodeName", "startTime", "cpu", "memory"]),
      ...(node.systemContainers
        ? {
          systemContainers: (node.systemContainers as Json[]).map((c) =>
            pick(c, ["name", "startTime", "cpu", "memory"])
          ),
        }
        : {}),
    },
    pods: pods.map((p) => ({
      ...pick(p, ["podRef", "startTime", "cpu", "memory"]),
      containers: (p.containers as Json[]).map((c) =>
        pick(c, ["name", "startTime", "cpu", "memory"])
      ),
    })),
  };
}
