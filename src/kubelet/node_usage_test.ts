import assert from "node:assert/strict";
import { readNodeUsage } from "./node_usage.ts";

/** A cgroup tree of literal files. */
function files(entries: Record<string, string>) {
  return {
    exists: (path: string) => Promise.resolve(path in entries),
    readTextFile: (path: string) =>
      path in entries
        ? Promise.resolve(entries[path]!)
        : Promise.reject(new Deno.errors.NotFound(path)),
  };
}

const memory = () => ({ total: 8_000, free: 3_000 });
const now = () => 42;

Deno.test("readNodeUsage() reads cgroup v1's cpuacct and memory at the root", async () => {
  const usage = await readNodeUsage({
    fs: files({
      "/sys/fs/cgroup/cpuacct/cpuacct.usage": "123456789\n",
      "/sys/fs/cgroup/memory/memory.usage_in_bytes": "5000\n",
      "/sys/fs/cgroup/memory/memory.stat":
        "cache 10\ninactive_file 1\ntotal_inactive_file 1200\nrss 7\n" +
        "total_rss 700\npgfault 8\ntotal_pgfault 800\npgmajfault 9\n" +
        "total_pgmajfault 90\n",
    }),
    memory,
    now,
  });
  assert.deepEqual(usage, {
    timeMs: 42,
    cpuCoreNanoSeconds: 123456789,
    memoryUsageBytes: 5000,
    // the hierarchy's total, not the root's own inactive pages
    memoryWorkingSetBytes: 3800,
    // likewise the hierarchy's rss, but the root's own fault counters as cAdvisor reads them
    memoryRssBytes: 700,
    memoryPageFaults: 8,
    memoryMajorPageFaults: 9,
  });
});

Deno.test("readNodeUsage() reads cgroup v2's cpu.stat and the machine's used memory", async () => {
  const usage = await readNodeUsage({
    fs: files({
      "/sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
      "/sys/fs/cgroup/cpu.stat": "usage_usec 2500\nuser_usec 2000\n",
      "/sys/fs/cgroup/memory.stat":
        "anon 1\ninactive_file 1000\npgfault 30\npgmajfault 3\n",
    }),
    memory,
    now,
  });
  assert.deepEqual(usage, {
    timeMs: 42,
    cpuCoreNanoSeconds: 2_500_000,
    memoryUsageBytes: 5000,
    memoryWorkingSetBytes: 4000,
    memoryRssBytes: 1,
    memoryPageFaults: 30,
    memoryMajorPageFaults: 3,
  });
});

Deno.test("readNodeUsage() floors the working set at 0 and leaves out what it cannot read", async () => {
  const usage = await readNodeUsage({
    fs: files({
      "/sys/fs/cgroup/memory/memory.usage_in_bytes": "100\n",
      "/sys/fs/cgroup/memory/memory.stat": "total_inactive_file 900\n",
    }),
    memory,
    now,
  });
  assert.deepEqual(usage, {
    timeMs: 42,
    memoryUsageBytes: 100,
    memoryWorkingSetBytes: 0,
  });
});
