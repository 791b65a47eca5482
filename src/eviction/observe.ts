/**
 * From the node's raw figures to eviction observations (upstream `makeSignalObservations` and
 * the cadvisor arithmetic behind the summary it reads): working set = usage − inactive file
 * pages, `memory.available` = capacity − the root cgroup's working set,
 * `allocatableMemory.available` = the kubepods limit − its working set, filesystem figures from
 * statfs, `pid.available` = the maximum − the threads running. Pure.
 * @module
 */
import type { Observations } from "./decide.ts";

/** A filesystem's size and free space. */
export interface FsFigures {
  capacityBytes: number;
  availableBytes: number;
  inodes: number;
  inodesFree: number;
}

/** What the node measured in one pass. */
export interface NodeStats {
  timeMs: number;
  /** The machine's memory and the root cgroup's working set. */
  memory?: { capacityBytes: number; workingSetBytes: number };
  /** The kubepods cgroup: its memory limit (undefined: unlimited) and working set. */
  allocatable?: { limitBytes: number | undefined; workingSetBytes: number };
  /** The filesystem of `--root-dir`. */
  nodeFs?: FsFigures;
  /** The runtime's image filesystem (the same figures as nodefs when not dedicated). */
  imageFs?: FsFigures;
  /** Thread limit and threads running. */
  pids?: { max: number; running: number };
}

/** Observations of one pass (containerfs shares the image filesystem: no split). */
export function observationsFrom(stats: NodeStats): Observations {
  const out: Observations = {};
  const timeMs = stats.timeMs;
  if (stats.memory) {
    const { capacityBytes, workingSetBytes } = stats.memory;
    out["memory.available"] = {
      available: capacityBytes - workingSetBytes,
      capacity: capacityBytes,
      timeMs,
    };
  }
  const a = stats.allocatable;
  if (a && a.limitBytes !== undefined) {
    out["allocatableMemory.available"] = {
      available: a.limitBytes - a.workingSetBytes,
      capacity: a.limitBytes,
      timeMs,
    };
  }
  const fs = (
    figures: FsFigures | undefined,
    bytes: "nodefs.available" | "imagefs.available" | "containerfs.available",
    inodes:
      | "nodefs.inodesFree"
      | "imagefs.inodesFree"
      | "containerfs.inodesFree",
  ) => {
    if (!figures) return;
    out[bytes] = {
      available: figures.availableBytes,
      capacity: figures.capacityBytes,
      timeMs,
    };
    out[inodes] = {
      available: figures.inodesFree,
      capacity: figures.inodes,
      timeMs,
    };
  };
  fs(stats.nodeFs, "nodefs.available", "nodefs.inodesFree");
  fs(stats.imageFs, "imagefs.available", "imagefs.inodesFree");
  fs(stats.imageFs, "containerfs.available", "containerfs.inodesFree");
  if (stats.pids) {
    out["pid.available"] = {
      available: stats.pids.max - stats.pids.running,
      capacity: stats.pids.max,
      timeMs,
    };
  }
  return out;
}

/** Above this a cgroup memory limit means "none" (v1 writes 2^63 rounded to pages). */
const UNLIMITED_BYTES = 2 ** 60;

/** A cgroup memory limit (`memory.limit_in_bytes` or `memory.max`), undefined for none. */
export function memoryLimit(text: string): number | undefined {
  const t = text.trim();
  if (t === "max" || t === "") return undefined;
  const n = Number(t);
  return Number.isFinite(n) && n < UNLIMITED_BYTES ? n : undefined;
}

/** The threads running, from `/proc/loadavg` (`0.00 0.01 0.05 1/234 5678`). */
export function threadsRunning(loadavg: string): number | undefined {
  const m = /^\S+\s+\S+\s+\S+\s+\d+\/(\d+)/.exec(loadavg);
  return m ? Number(m[1]) : undefined;
}
