import assert from "node:assert/strict";
import {
  apiTime,
  buildSummary,
  cpuAndMemoryOnly,
  type CriContainerStats,
  type SummaryInput,
} from "./summary.ts";

const NOW = Date.UTC(2026, 11, 3, 6, 0, 0);
const NS = BigInt(NOW) * 1_000_000n;
const u = (value: number) => ({ value: BigInt(value) });

function container(id: string, name: string, cpu: number, ws: number) {
  return {
    attributes: { id, metadata: { name }, labels: {} },
    cpu: { timestamp: NS, usageCoreNanoSeconds: u(cpu), usageNanoCores: u(5) },
    memory: {
      timestamp: NS,
      workingSetBytes: u(ws),
      usageBytes: u(ws + 10),
      rssBytes: u(ws - 10),
    },
    writableLayer: { timestamp: NS, usedBytes: u(4096), inodesUsed: u(3) },
  } satisfies CriContainerStats;
}

function input(overrides: Partial<SummaryInput> = {}): SummaryInput {
  return {
    nodeName: "node-a",
    nowMs: NOW,
    startTimeMs: NOW - 60_000,
    nodeMemory: { totalBytes: 1000, freeBytes: 300, availableBytes: 600 },
    nodeFs: {
      capacityBytes: 10_000,
      availableBytes: 4_000,
      inodes: 100,
      inodesFree: 40,
    },
    imageFs: {
      capacityBytes: 20_000,
      availableBytes: 5_000,
      inodes: 200,
      inodesFree: 50,
      usedBytes: 7_000,
      inodesUsed: 90,
    },
    pods: [{
      attributes: {
        id: "sb1",
        metadata: { name: "web", namespace: "default", uid: "uid-1" },
      },
      linux: {
        containers: [
          container("c1", "app", 1_000, 100),
          container("c2", "side", 2_000, 200),
          container("gone", "old", 9, 9),
        ],
        process: { timestamp: NS, processCount: u(4) },
        network: {
          timestamp: NS,
          defaultInterface: { name: "eth0", rxBytes: u(11), txBytes: u(22) },
          interfaces: [],
        },
      },
    }, {
      attributes: {
        id: "not-ready",
        metadata: { name: "x", namespace: "default", uid: "uid-2" },
      },
      linux: { containers: [] },
    }],
    sandboxStartMs: new Map([["sb1", NOW - 30_000]]),
    containerStartMs: new Map([["c1", NOW - 20_000], ["c2", NOW - 10_000]]),
    containerLogs: new Map([["c2", { usedBytes: 300, inodesUsed: 2 }]]),
    ...overrides,
  };
}

Deno.test("apiTime is metav1.Time: RFC 3339, UTC, whole seconds", () => {
  assert.equal(apiTime(NOW + 999), "2026-12-03T06:00:00Z");
});

Deno.test("the summary has upstream's shape: node figures, ready pods, running containers", () => {
  const summary = buildSummary(input());
  const time = apiTime(NOW);
  const runtimeFs = {
    time,
    availableBytes: 5_000,
    capacityBytes: 20_000,
    usedBytes: 7_000,
    inodesFree: 50,
    inodes: 200,
    inodesUsed: 90,
  };
  assert.deepEqual(summary.node, {
    nodeName: "node-a",
    startTime: apiTime(NOW - 60_000),
    memory: {
      time,
      availableBytes: 600,
      usageBytes: 700,
      workingSetBytes: 400,
    },
    fs: {
      time,
      availableBytes: 4_000,
      capacityBytes: 10_000,
      usedBytes: 6_000,
      inodesFree: 40,
      inodes: 100,
      inodesUsed: 60,
    },
    // containerd 1.6 names no container filesystem: the image one serves as both
    runtime: { imageFs: runtimeFs, containerFs: runtimeFs },
  });
  const pods = summary.pods as Array<Record<string, unknown>>;
  assert.equal(pods.length, 1);
  const pod = pods[0]!;
  assert.deepEqual(pod.podRef, {
    name: "web",
    namespace: "default",
    uid: "uid-1",
  });
  assert.equal(pod.startTime, apiTime(NOW - 30_000));
  const containers = pod.containers as Array<Record<string, unknown>>;
  assert.deepEqual(containers.map((c) => c.name), ["app", "side"]);
  // log usage on the node's filesystem, for the containers it was measured for
  assert.deepEqual(containers[1]!.logs, {
    time,
    availableBytes: 4_000,
    capacityBytes: 10_000,
    usedBytes: 300,
    inodesFree: 40,
    inodes: 100,
    inodesUsed: 2,
  });
  assert.deepEqual(containers[0], {
    name: "app",
    startTime: apiTime(NOW - 20_000),
    cpu: { time, usageNanoCores: 5, usageCoreNanoSeconds: 1_000 },
    memory: { time, usageBytes: 110, workingSetBytes: 100, rssBytes: 90 },
    rootfs: {
      time,
      availableBytes: 5_000,
      capacityBytes: 20_000,
      usedBytes: 4096,
      inodesFree: 50,
      inodes: 200,
      inodesUsed: 3,
    },
  });
  // No pod cgroup figures from the runtime: the containers' sums.
  assert.deepEqual(pod.cpu, {
    time,
    usageNanoCores: 10,
    usageCoreNanoSeconds: 3_000,
  });
  assert.deepEqual(pod.memory, {
    time,
    usageBytes: 320,
    workingSetBytes: 300,
    rssBytes: 280,
  });
  // the runtime listed no interfaces: the default one is the list
  assert.deepEqual(pod.network, {
    time,
    name: "eth0",
    rxBytes: 11,
    txBytes: 22,
    interfaces: [{ name: "eth0", rxBytes: 11, txBytes: 22 }],
  });
  // the two writable layers and c2's logs (upstream `calcEphemeralStorage`)
  assert.deepEqual(pod["ephemeral-storage"], {
    time,
    availableBytes: 4_000,
    capacityBytes: 10_000,
    usedBytes: 8192 + 300,
    inodesFree: 40,
    inodes: 100,
    inodesUsed: 6 + 2,
  });
  assert.deepEqual(pod.process_stats, { process_count: 4 });
  assert.equal(pod.volume, undefined);
});

Deno.test("the sandbox's own CPU and memory win over the containers' sums", () => {
  const base = input();
  const sandbox = base.pods[0]!;
  const summary = buildSummary({
    ...base,
    pods: [{
      ...sandbox,
      linux: {
        ...sandbox.linux!,
        cpu: { timestamp: NS, usageCoreNanoSeconds: u(7_777) },
        memory: { timestamp: NS, workingSetBytes: u(555) },
      },
    }],
  });
  const pod = (summary.pods as Array<Record<string, unknown>>)[0]!;
  assert.deepEqual(pod.cpu, {
    time: apiTime(NOW),
    usageCoreNanoSeconds: 7_777,
  });
  assert.deepEqual(pod.memory, { time: apiTime(NOW), workingSetBytes: 555 });
});

Deno.test("figures that could not be read are left out, never zero", () => {
  const summary = buildSummary({
    nodeName: "n",
    nowMs: NOW,
    startTimeMs: NOW,
    pods: [],
    sandboxStartMs: new Map(),
    containerStartMs: new Map(),
  });
  assert.deepEqual(summary, {
    node: { nodeName: "n", startTime: apiTime(NOW) },
    pods: [],
  });
});

Deno.test("only_cpu_and_memory keeps names, start times, CPU and memory", () => {
  const only = cpuAndMemoryOnly(buildSummary(input()));
  const node = only.node as Record<string, unknown>;
  assert.deepEqual(Object.keys(node).sort(), [
    "memory",
    "nodeName",
    "startTime",
  ]);
  const pod = (only.pods as Array<Record<string, unknown>>)[0]!;
  assert.deepEqual(Object.keys(pod).sort(), [
    "containers",
    "cpu",
    "memory",
    "podRef",
    "startTime",
  ]);
  const c = (pod.containers as Array<Record<string, unknown>>)[0]!;
  assert.deepEqual(Object.keys(c).sort(), [
    "cpu",
    "memory",
    "name",
    "startTime",
  ]);
});

Deno.test("the node's CPU and memory come from the root cgroup when it was read", () => {
  const summary = buildSummary(input({
    nodeUsage: {
      timeMs: NOW - 2_000,
      cpuCoreNanoSeconds: 9_000,
      cpuNanoCores: 250,
      memoryUsageBytes: 800,
      memoryWorkingSetBytes: 650,
      memoryRssBytes: 500,
      memoryPageFaults: 70,
      memoryMajorPageFaults: 7,
    },
  }));
  const node = summary.node as Record<string, unknown>;
  const time = apiTime(NOW - 2_000);
  assert.deepEqual(node.cpu, {
    time,
    usageNanoCores: 250,
    usageCoreNanoSeconds: 9_000,
  });
  assert.deepEqual(node.memory, {
    time,
    // the root's limit is the machine's memory (1000)
    availableBytes: 350,
    usageBytes: 800,
    workingSetBytes: 650,
    rssBytes: 500,
    pageFaults: 70,
    majorPageFaults: 7,
  });
  assert.deepEqual(
    Object.keys(cpuAndMemoryOnly(summary).node as Record<string, unknown>)
      .sort(),
    ["cpu", "memory", "nodeName", "startTime"],
  );
});

Deno.test("a first root reading has CPU time but no rate; unread memory falls back to meminfo", () => {
  const summary = buildSummary(input({
    nodeUsage: { timeMs: NOW, cpuCoreNanoSeconds: 9_000 },
  }));
  const node = summary.node as Record<string, unknown>;
  assert.deepEqual(node.cpu, {
    time: apiTime(NOW),
    usageCoreNanoSeconds: 9_000,
  });
  assert.deepEqual(node.memory, {
    time: apiTime(NOW),
    availableBytes: 600,
    usageBytes: 700,
    workingSetBytes: 400,
  });
});

Deno.test("a pod without its own figures sums every memory figure its containers have", () => {
  const base = input();
  const sandbox = base.pods[0]!;
  const later = NS + 3_000_000_000n;
  const a = container("c1", "app", 1_000, 100);
  const b = container("c2", "side", 2_000, 200);
  const summary = buildSummary({
    ...base,
    pods: [{
      ...sandbox,
      linux: {
        ...sandbox.linux!,
        containers: [
          {
            ...a,
            memory: {
              ...a.memory,
              availableBytes: u(40),
              pageFaults: u(5),
              majorPageFaults: u(1),
            },
          },
          {
            ...b,
            cpu: { ...b.cpu, timestamp: later },
            memory: { ...b.memory, pageFaults: u(6) },
          },
        ],
      },
    }],
  });
  const pod = (summary.pods as Array<Record<string, unknown>>)[0]!;
  // the latest container reading's time
  assert.deepEqual(pod.cpu, {
    time: apiTime(NOW + 3_000),
    usageNanoCores: 10,
    usageCoreNanoSeconds: 3_000,
  });
  assert.deepEqual(pod.memory, {
    time: apiTime(NOW),
    availableBytes: 40,
    usageBytes: 320,
    workingSetBytes: 300,
    rssBytes: 280,
    pageFaults: 11,
    majorPageFaults: 1,
  });
});

Deno.test("a network reading without time (containerd 1.6) is timed at the summary", () => {
  const base = input({ nowMs: NOW + 5_000 });
  const sandbox = base.pods[0]!;
  const eth0 = { name: "eth0", rxBytes: u(1) };
  const summary = buildSummary({
    ...base,
    pods: [{
      ...sandbox,
      linux: {
        ...sandbox.linux!,
        network: {
          timestamp: 0n,
          defaultInterface: eth0,
          interfaces: [eth0, { name: "net1", txBytes: u(2) }],
        },
      },
    }],
  });
  const pod = (summary.pods as Array<Record<string, unknown>>)[0]!;
  assert.deepEqual(pod.network, {
    time: apiTime(NOW + 5_000),
    name: "eth0",
    rxBytes: 1,
    interfaces: [{ name: "eth0", rxBytes: 1 }, { name: "net1", txBytes: 2 }],
  });
});

Deno.test("system containers carry their cgroup's CPU and memory; available only under a limit", () => {
  const base = {
    timeMs: NOW,
    cpuCoreNanoSeconds: 5e9,
    cpuNanoCores: 1e6,
    memoryUsageBytes: 9e6,
    memoryWorkingSetBytes: 8e6,
    memoryRssBytes: 6e6,
    memoryPageFaults: 4000,
    memoryMajorPageFaults: 2,
  };
  const summary = buildSummary(input({
    systemContainers: [
      { name: "kubelet", usage: { ...base, startMs: NOW - 90_000 } },
      {
        name: "pods",
        usage: { ...base, startMs: NOW - 80_000, memoryLimitBytes: 10e6 },
      },
    ],
  }));
  const [kubelet, pods] = (summary.node as Record<string, unknown>)
    .systemContainers as Array<Record<string, Record<string, unknown>>>;
  assert.deepEqual(kubelet, {
    name: "kubelet" as never,
    startTime: apiTime(NOW - 90_000) as never,
    cpu: {
      time: apiTime(NOW),
      usageNanoCores: 1e6,
      usageCoreNanoSeconds: 5e9,
    },
    memory: {
      time: apiTime(NOW),
      usageBytes: 9e6,
      workingSetBytes: 8e6,
      rssBytes: 6e6,
      pageFaults: 4000,
      majorPageFaults: 2,
    },
  });
  assert.equal(pods!.memory!.availableBytes, 2e6);
  assert.equal(pods!.startTime, apiTime(NOW - 80_000));
  // the cpu-and-memory view keeps them too
  const only = cpuAndMemoryOnly(summary).node as Record<string, unknown>;
  assert.equal((only.systemContainers as unknown[]).length, 2);
});

Deno.test("no system container read leaves the key out", () => {
  const node = buildSummary(input({ systemContainers: [] })).node as Record<
    string,
    unknown
  >;
  assert.equal("systemContainers" in node, false);
  assert.equal("network" in node, false);
  assert.equal("rlimit" in node, false);
});

Deno.test("the node network lists every interface and eth0 as the default", () => {
  const eth0 = {
    name: "eth0",
    rxBytes: 10,
    rxErrors: 1,
    txBytes: 20,
    txErrors: 2,
  };
  const ifb0 = {
    name: "ifb0",
    rxBytes: 0,
    rxErrors: 0,
    txBytes: 0,
    txErrors: 0,
  };
  const withEth0 = buildSummary(input({
    nodeNetwork: { timeMs: NOW - 1000, interfaces: [ifb0, eth0] },
  })).node as Record<string, unknown>;
  assert.deepEqual(withEth0.network, {
    time: apiTime(NOW - 1000),
    ...eth0,
    interfaces: [ifb0, eth0],
  });
  const without = buildSummary(input({
    nodeNetwork: { timeMs: NOW, interfaces: [ifb0] },
  })).node as Record<string, unknown>;
  // no eth0: upstream names no default interface
  assert.deepEqual(without.network, { time: apiTime(NOW), interfaces: [ifb0] });
});

Deno.test("rlimit is the task limit and the tasks running", () => {
  const node = buildSummary(input({
    rlimit: { timeMs: NOW, maxpid: 32768, curproc: 466 },
  })).node as Record<string, unknown>;
  assert.deepEqual(node.rlimit, {
    time: apiTime(NOW),
    maxpid: 32768,
    curproc: 466,
  });
});

Deno.test("a pod's measured volumes carry their filesystem's figures and name", () => {
  const pods = buildSummary(input({
    podVolumes: new Map([["uid-1", [{
      name: "cache",
      timeMs: NOW - 2000,
      usedBytes: 4096,
      inodesUsed: 3,
      localEphemeral: true,
      fs: {
        capacityBytes: 500,
        availableBytes: 200,
        inodes: 50,
        inodesFree: 20,
      },
    }, { name: "bare", timeMs: NOW, usedBytes: 5, inodesUsed: 1 }]]]),
  })).pods as Array<Record<string, unknown>>;
  assert.deepEqual(pods[0]!.volume, [{
    time: apiTime(NOW - 2000),
    availableBytes: 200,
    capacityBytes: 500,
    usedBytes: 4096,
    inodesFree: 20,
    inodes: 50,
    inodesUsed: 3,
    name: "cache",
  }, { time: apiTime(NOW), usedBytes: 5, inodesUsed: 1, name: "bare" }]);
  // the disk-backed one counts in the pod's ephemeral storage, with layers and logs
  assert.deepEqual(
    (pods[0]!["ephemeral-storage"] as Record<string, unknown>).usedBytes,
    8192 + 300 + 4096,
  );
  const none = buildSummary(input()).pods as Array<Record<string, unknown>>;
  assert.equal("volume" in none[0]!, false);
});
