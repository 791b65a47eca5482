import assert from "node:assert/strict";
import { type CgroupUsageFs, readCgroupUsage } from "./cgroup_usage.ts";

/** Literal files; directories listed in `dirs` have the given modification times. */
function fakeFs(
  files: Record<string, string>,
  dirs: Record<string, number>,
): CgroupUsageFs {
  return {
    exists: (path) => Promise.resolve(path in files || path in dirs),
    readTextFile: (path) =>
      path in files
        ? Promise.resolve(files[path]!)
        : Promise.reject(new Deno.errors.NotFound(path)),
    modifiedMs: (path) =>
      path in dirs
        ? Promise.resolve(dirs[path]!)
        : Promise.reject(new Deno.errors.NotFound(path)),
  };
}

const V1_STAT = [
  "cache 100",
  "rss 5",
  "total_cache 4000000",
  "total_rss 3000000",
  "pgfault 0",
  "pgmajfault 0",
  "total_pgfault 1500",
  "total_pgmajfault 7",
  "total_inactive_file 1000000",
].join("\n");

Deno.test("a cgroup v1 container: cpuacct, memory usage less inactive file, the limit", async () => {
  const fs = fakeFs({
    "/sys/fs/cgroup/cpuacct/kubepods/cpuacct.usage": "123456789\n",
    "/sys/fs/cgroup/memory/kubepods/memory.usage_in_bytes": "9000000\n",
    "/sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes": "20000000\n",
    "/sys/fs/cgroup/memory/kubepods/memory.stat": V1_STAT,
  }, { "/sys/fs/cgroup/memory/kubepods": 1_000 });
  assert.deepEqual(await readCgroupUsage(fs, "/kubepods", () => 5_000), {
    startMs: 1_000,
    timeMs: 5_000,
    cpuCoreNanoSeconds: 123456789,
    memoryUsageBytes: 9000000,
    memoryWorkingSetBytes: 8000000,
    memoryLimitBytes: 20000000,
    memoryRssBytes: 3000000,
    // the cgroup's own faults (none: its tasks are in child cgroups), as cAdvisor reads them
    memoryPageFaults: 0,
    memoryMajorPageFaults: 0,
  });
});

Deno.test("a cgroup v1 container without a limit has none", async () => {
  const fs = fakeFs({
    "/sys/fs/cgroup/memory/kubelet.slice/memory.usage_in_bytes": "9000000\n",
    "/sys/fs/cgroup/memory/kubelet.slice/memory.limit_in_bytes":
      "9223372036854771712\n",
  }, { "/sys/fs/cgroup/memory/kubelet.slice": 1_000 });
  const u = await readCgroupUsage(fs, "/kubelet.slice/", () => 5_000);
  assert.equal(u?.memoryLimitBytes, undefined);
  assert.equal(u?.memoryUsageBytes, 9000000);
  // no stat file: no working set, rss or faults, and no CPU without cpuacct
  assert.equal(u?.memoryWorkingSetBytes, undefined);
  assert.equal(u?.cpuCoreNanoSeconds, undefined);
});

Deno.test("a cgroup v2 container: cpu.stat usage_usec, memory.current, memory.max", async () => {
  const fs = fakeFs({
    "/sys/fs/cgroup/cgroup.controllers": "cpu memory pids\n",
    "/sys/fs/cgroup/kubepods.slice/cpu.stat":
      "usage_usec 2500\nuser_usec 2000\n",
    "/sys/fs/cgroup/kubepods.slice/memory.current": "7000000\n",
    "/sys/fs/cgroup/kubepods.slice/memory.max": "max\n",
    "/sys/fs/cgroup/kubepods.slice/memory.stat":
      "anon 2000000\ninactive_file 500000\npgfault 300\npgmajfault 1\n",
  }, { "/sys/fs/cgroup/kubepods.slice": 2_000 });
  assert.deepEqual(await readCgroupUsage(fs, "/kubepods.slice", () => 9_000), {
    startMs: 2_000,
    timeMs: 9_000,
    cpuCoreNanoSeconds: 2_500_000,
    memoryUsageBytes: 7000000,
    memoryWorkingSetBytes: 6500000,
    memoryRssBytes: 2000000,
    memoryPageFaults: 300,
    memoryMajorPageFaults: 1,
  });
});

Deno.test("a cgroup that is missing or cannot be stat'ed is not reported", async () => {
  const fs = fakeFs({
    "/sys/fs/cgroup/memory/gone/memory.usage_in_bytes": "1\n",
  }, {});
  assert.equal(await readCgroupUsage(fs, "/gone", () => 0), undefined);
});
