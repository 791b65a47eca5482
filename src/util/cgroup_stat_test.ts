import assert from "node:assert/strict";
import { statValue, workingSet } from "./cgroup_stat.ts";

Deno.test("statValue() reads cgroup stat keys and /proc/meminfo kB figures", () => {
  const stat = "cache 10\ntotal_inactive_file 4096\ntotal_rss 77\n";
  assert.equal(statValue(stat, "total_inactive_file"), 4096);
  assert.equal(statValue(stat, "total_rss"), 77);
  // a key that is a prefix of another is not matched by it
  assert.equal(statValue(stat, "total"), undefined);
  const meminfo = "MemTotal:       2048 kB\nMemFree:         512 kB\n";
  assert.equal(statValue(meminfo, "MemTotal"), 2048 * 1024);
  assert.equal(statValue(meminfo, "MemFree"), 512 * 1024);
  assert.equal(statValue("usage_usec notanumber\n", "usage_usec"), undefined);
});

Deno.test("workingSet() subtracts inactive file pages and floors at 0", () => {
  assert.equal(workingSet(1000, 300), 700);
  assert.equal(workingSet(100, 300), 0);
});
