import assert from "node:assert/strict";
import type { HostFiles } from "../pod/mod.ts";
import { readNodeStats } from "./node_stats.ts";

const MI = 1024 * 1024;

/** A host of literal files; statfs answers one figure set per path. */
function host(files: Record<string, string>): HostFiles {
  return {
    exists: (path) => Promise.resolve(path in files),
    readTextFile: (path) =>
      path in files
        ? Promise.resolve(files[path]!)
        : Promise.reject(new Deno.errors.NotFound(path)),
    statfs: (path) =>
      Promise.resolve({
        capacityBytes: 100 * MI,
        availableBytes: 40 * MI,
        inodes: 1000,
        inodesFree: 600,
        device: path.startsWith("/var/lib/containerd") ? 2 : 1,
      }),
    modifiedMs: (path) => Promise.reject(new Deno.errors.NotFound(path)),
  };
}

const runtime = {
  listContainerStats: () => Promise.resolve({ stats: [] }),
  imageFsInfo: () =>
    Promise.resolve({
      imageFilesystems: [{ fsId: { mountpoint: "/var/lib/containerd" } }],
      containerFilesystems: [],
    }),
  // deno-lint-ignore no-explicit-any
} as any;

const paths = {
  rootDir: "/var/lib/kubelet",
  podLogsDir: "/var/log/pods",
  kubepods: "/kubepods",
};

Deno.test("readNodeStats() takes the node's working set from the root reader and kubepods from its own cgroup (v1)", async () => {
  const { stats, dedicatedImageFs } = await readNodeStats({
    host: host({
      "/sys/fs/cgroup/memory/memory.usage_in_bytes": "999\n",
      "/sys/fs/cgroup/memory/kubepods/memory.usage_in_bytes": `${300 * MI}\n`,
      "/sys/fs/cgroup/memory/kubepods/memory.stat":
        `cache 1\ntotal_inactive_file ${100 * MI}\n`,
      "/sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes": `${800 * MI}\n`,
      "/proc/sys/kernel/pid_max": "4096\n",
      "/proc/loadavg": "0.00 0.01 0.05 1/234 5678\n",
    }),
    runtime,
    memoryCapacity: () => 1024 * MI,
    rootWorkingSet: () => Promise.resolve(700 * MI),
    now: () => 5,
  }, paths);
  assert.deepEqual(stats.memory, {
    capacityBytes: 1024 * MI,
    workingSetBytes: 700 * MI,
  });
  assert.deepEqual(stats.allocatable, {
    limitBytes: 800 * MI,
    workingSetBytes: 200 * MI,
  });
  assert.deepEqual(stats.pids, { max: 4096, running: 234 });
  assert.equal(stats.nodeFs?.availableBytes, 40 * MI);
  assert.equal(dedicatedImageFs, true);
});

Deno.test("readNodeStats() reads kubepods on cgroup v2 and leaves out the node memory the root reader cannot give", async () => {
  const { stats } = await readNodeStats({
    host: host({
      "/sys/fs/cgroup/cgroup.controllers": "cpu memory pids\n",
      "/sys/fs/cgroup/kubepods/memory.current": `${50 * MI}\n`,
      "/sys/fs/cgroup/kubepods/memory.stat": `inactive_file ${10 * MI}\n`,
      "/sys/fs/cgroup/kubepods/memory.max": "max\n",
    }),
    runtime,
    memoryCapacity: () => 1024 * MI,
    rootWorkingSet: () => Promise.resolve(undefined),
    now: () => 5,
  }, paths);
  assert.equal(stats.memory, undefined);
  assert.deepEqual(stats.allocatable, {
    limitBytes: undefined,
    workingSetBytes: 40 * MI,
  });
});
