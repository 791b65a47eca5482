import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CpuRates } from "../server/mod.ts";
import { type StatsDeps, statsSummary } from "./stats_summary.ts";

const S = 1_000_000_000n;

/** A runtime with one ready sandbox whose container has used `usedS` seconds of CPU by `atMs`. */
function runtime(reading: () => { atMs: number; usedS: bigint }) {
  const metadata = { name: "web", namespace: "default", uid: "uid-1" };
  return {
    listPodSandbox: () =>
      Promise.resolve({
        items: [{ id: "sb1", state: 0, createdAt: 0n, metadata }],
      }),
    listContainers: () =>
      Promise.resolve({
        containers: [{ id: "c1", state: 1, createdAt: 0n, labels: {} }],
      }),
    listPodSandboxStats: () => {
      const { atMs, usedS } = reading();
      return Promise.resolve({
        stats: [{
          attributes: { id: "sb1", metadata },
          linux: {
            containers: [{
              attributes: { id: "c1", metadata: { name: "app" }, labels: {} },
              cpu: {
                timestamp: BigInt(atMs) * 1_000_000n,
                usageCoreNanoSeconds: { value: usedS * S },
              },
            }],
          },
        }],
      });
    },
    listContainerStats: () => Promise.resolve({ stats: [] }),
    imageFsInfo: () => Promise.reject(new Error("not asked")),
  } as unknown as StatsDeps["runtime"];
}

/** A cgroup v1 root whose `cpuacct.usage` is what `usedS()` says. */
function hostFiles(usedS: () => bigint) {
  return {
    exists: () => Promise.resolve(false),
    readTextFile: (path: string) =>
      path === "/sys/fs/cgroup/cpuacct/cpuacct.usage"
        ? Promise.resolve(`${usedS() * S}\n`)
        : Promise.reject(new Deno.errors.NotFound(path)),
    modifiedMs: (path: string) =>
      Promise.reject(new Deno.errors.NotFound(path)),
  };
}

Deno.test("statsSummary() gives the node and each container a rate from the previous request", async () => {
  const clock = new FakeClock();
  let nodeUsed = 100n;
  let containerUsed = 1n;
  const deps: StatsDeps = {
    clock,
    runtime: runtime(() => ({ atMs: clock.now(), usedS: containerUsed })),
    nodeName: "node-a",
    rootDir: "/nonexistent-root-dir",
    startTimeMs: clock.now(),
    hostFiles: hostFiles(() => nodeUsed),
    cpuRates: new CpuRates(),
  };
  type Json = Record<string, Record<string, unknown>>;
  const cpus = async () => {
    const s = await statsSummary(deps) as unknown as {
      node: Json;
      pods: Array<{ containers: Json[] }>;
    };
    return {
      node: s.node.cpu,
      container: s.pods[0]!.containers[0]!.cpu,
    };
  };
  const first = await cpus();
  assert.equal(first.node?.usageCoreNanoSeconds, 100e9);
  assert.equal(first.node?.usageNanoCores, undefined);
  assert.equal(first.container?.usageNanoCores, undefined);
  await clock.advance(10_000);
  // 5 s of the machine's CPU and 2 s of the container's over 10 s
  nodeUsed += 5n;
  containerUsed += 2n;
  const second = await cpus();
  assert.equal(second.node?.usageNanoCores, 500_000_000);
  assert.equal(second.container?.usageNanoCores, 200_000_000);
});

/** A cgroup v1 host with a kubepods cgroup, its CPU time what `usedS()` says. */
function hostWithKubepods(usedS: () => bigint, stat: boolean) {
  const files: Record<string, () => string> = {
    "/sys/fs/cgroup/cpuacct/kubepods/cpuacct.usage": () => `${usedS() * S}\n`,
    "/sys/fs/cgroup/memory/kubepods/memory.usage_in_bytes": () => "5000000\n",
    "/proc/sys/kernel/pid_max": () => "32768\n",
    "/proc/sys/kernel/threads-max": () => "190000\n",
    "/proc/loadavg": () => "0.10 0.20 0.30 2/466 9999\n",
    "/proc/net/dev": () =>
      "  eth0: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0\n    lo: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n",
  };
  return {
    exists: () => Promise.resolve(false),
    readTextFile: (path: string) =>
      files[path]
        ? Promise.resolve(files[path]())
        : Promise.reject(new Deno.errors.NotFound(path)),
    // a cgroup agent refuses the time of a cgroup it does not serve
    modifiedMs: (path: string) =>
      stat && path === "/sys/fs/cgroup/memory/kubepods"
        ? Promise.resolve(1_000)
        : Promise.reject(new Deno.errors.PermissionDenied(path)),
  };
}

Deno.test("statsSummary() reads the system containers, node network and rlimit from the host", async () => {
  const clock = new FakeClock();
  let podsUsed = 10n;
  const deps: StatsDeps = {
    clock,
    runtime: runtime(() => ({ atMs: clock.now(), usedS: 1n })),
    nodeName: "node-a",
    rootDir: "/nonexistent-root-dir",
    startTimeMs: clock.now(),
    hostFiles: hostWithKubepods(() => podsUsed, true),
    cpuRates: new CpuRates(),
    systemCgroups: [
      { name: "kubelet", cgroup: "/kubelet.slice" },
      { name: "pods", cgroup: "/kubepods" },
    ],
  };
  type Node = Record<string, unknown> & {
    systemContainers?: Array<Record<string, Record<string, unknown>>>;
  };
  const node = async () => ((await statsSummary(deps)) as { node: Node }).node;
  const first = await node();
  // the kubelet's cgroup does not exist here: only pods is reported
  assert.deepEqual(first.systemContainers?.map((c) => c.name), ["pods"]);
  const pods = first.systemContainers![0]!;
  assert.equal(pods.startTime, "1970-01-01T00:00:01Z" as never);
  assert.equal(pods.cpu?.usageCoreNanoSeconds, 10e9);
  assert.equal(pods.memory?.usageBytes, 5_000_000);
  assert.deepEqual(first.rlimit, {
    time: new Date(clock.now()).toISOString().replace(/\.\d+Z$/, "Z"),
    maxpid: 32768,
    curproc: 466,
  });
  assert.deepEqual(
    (first.network as { interfaces: { name: string }[] }).interfaces.map((
      i,
    ) => i.name),
    ["eth0"],
  );
  await clock.advance(10_000);
  podsUsed += 1n;
  const second = await node();
  assert.equal(second.systemContainers![0]!.cpu?.usageNanoCores, 100_000_000);
});

Deno.test("statsSummary() leaves a system container out when its cgroup cannot be stat'ed", async () => {
  const clock = new FakeClock();
  const summary = await statsSummary({
    clock,
    runtime: runtime(() => ({ atMs: clock.now(), usedS: 1n })),
    nodeName: "node-a",
    rootDir: "/nonexistent-root-dir",
    startTimeMs: clock.now(),
    hostFiles: hostWithKubepods(() => 1n, false),
    cpuRates: new CpuRates(),
    systemCgroups: [{ name: "pods", cgroup: "/kubepods" }],
  }) as { node: Record<string, unknown> };
  assert.equal("systemContainers" in summary.node, false);
  assert.ok(summary.node.rlimit);
});

Deno.test("statsSummary() takes the image filesystem's figures from the host files when it cannot statfs it", async () => {
  const clock = new FakeClock();
  const base = runtime(() => ({ atMs: clock.now(), usedS: 1n }));
  const summary = await statsSummary({
    clock,
    runtime: {
      ...base,
      imageFsInfo: () =>
        Promise.resolve({
          imageFilesystems: [{
            fsId: { mountpoint: "/nonexistent-runtime-root" },
            usedBytes: { value: 700n },
            inodesUsed: { value: 7n },
          }],
        }),
    } as unknown as StatsDeps["runtime"],
    nodeName: "node-a",
    rootDir: "/nonexistent-root-dir",
    startTimeMs: clock.now(),
    hostFiles: {
      ...hostWithKubepods(() => 1n, false),
      statfs: (path: string) =>
        path === "/nonexistent-runtime-root"
          ? Promise.resolve({
            capacityBytes: 5000,
            availableBytes: 2000,
            inodes: 90,
            inodesFree: 40,
            device: 3,
          })
          : Promise.reject(new Deno.errors.NotFound(path)),
    },
    cpuRates: new CpuRates(),
  }) as { node: { runtime?: Record<string, Record<string, unknown>> } };
  const imageFs = summary.node.runtime?.imageFs;
  assert.equal(imageFs?.capacityBytes, 5000);
  assert.equal(imageFs?.availableBytes, 2000);
  assert.equal(imageFs?.usedBytes, 700);
  assert.equal("device" in (imageFs ?? {}), false);
});
