/**
 * One cgroup's CPU time and memory as cAdvisor gives them for upstream's system containers
 * (`kubelet`, `runtime`, `misc`, `pods` in `/stats/summary`): cgroup v1 `cpuacct.usage`,
 * `memory.usage_in_bytes`, `memory.limit_in_bytes` and `memory.stat` (rss the hierarchy's
 * total, faults the cgroup's own, as cAdvisor reads them);
 * cgroup v2 `cpu.stat` `usage_usec`, `memory.current`, `memory.max` and `memory.stat`. The
 * start time is the cgroup directory's modification time, as cAdvisor takes it.
 *
 * @module
 */

import { memoryLimit } from "../eviction/mod.ts";
import type { SystemContainerUsage } from "../server/mod.ts";
import { statValue, workingSet } from "../util/cgroup_stat.ts";
import { memoryCounters } from "./node_usage.ts";

const MOUNT = "/sys/fs/cgroup";

/** The reads the cgroup figures need. */
export interface CgroupUsageFs {
  exists(path: string): Promise<boolean>;
  readTextFile(path: string): Promise<string>;
  /** The modification time (ms) of a directory. */
  modifiedMs(path: string): Promise<number>;
}

/** A whole number from a one-value cgroup file, undefined otherwise. */
function count(text: string | undefined): number | undefined {
  const t = text?.trim();
  return t !== undefined && /^\d+$/.test(t) ? Number(t) : undefined;
}

/**
 * The figures of the cgroup `name` (absolute, cgroupfs form) now; undefined when the cgroup
 * cannot be read at all (missing, or no grant), figures of unreadable files left out.
 */
export async function readCgroupUsage(
  fs: CgroupUsageFs,
  name: string,
  now: () => number,
): Promise<SystemContainerUsage | undefined> {
  const read = (path: string) => fs.readTextFile(path).catch(() => undefined);
  const cg = name === "/" ? "" : name.replace(/\/+$/, "");
  const v2 = await fs.exists(`${MOUNT}/cgroup.controllers`).catch(() => false);
  const cpuDir = v2 ? `${MOUNT}${cg}` : `${MOUNT}/cpuacct${cg}`;
  const memDir = v2 ? `${MOUNT}${cg}` : `${MOUNT}/memory${cg}`;
  const startMs = await fs.modifiedMs(memDir).catch(() => undefined);
  if (startMs === undefined) return undefined;
  const [cpu, usage, limit, stat] = await Promise.all([
    read(v2 ? `${cpuDir}/cpu.stat` : `${cpuDir}/cpuacct.usage`),
    read(`${memDir}/${v2 ? "memory.current" : "memory.usage_in_bytes"}`),
    read(`${memDir}/${v2 ? "memory.max" : "memory.limit_in_bytes"}`),
    read(`${memDir}/memory.stat`),
  ]);
  const out: SystemContainerUsage = { startMs, timeMs: now() };
  const cpuNs = v2
    ? (cpu === undefined ? undefined : statValue(cpu, "usage_usec"))
    : count(cpu);
  if (cpuNs !== undefined) out.cpuCoreNanoSeconds = v2 ? cpuNs * 1000 : cpuNs;
  const used = count(usage);
  if (used !== undefined) {
    out.memoryUsageBytes = used;
    const inactive = stat === undefined ? undefined : statValue(
      stat,
      v2 ? "inactive_file" : "total_inactive_file",
    );
    if (inactive !== undefined) {
      out.memoryWorkingSetBytes = workingSet(used, inactive);
    }
  }
  const limitBytes = limit === undefined ? undefined : memoryLimit(limit);
  if (limitBytes !== undefined) out.memoryLimitBytes = limitBytes;
  return stat === undefined
    ? out
    : { ...out, ...memoryCounters(stat, v2 ? "v2" : "v1") };
}
