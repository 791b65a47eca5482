/**
 * Slices as the systemd cgroup driver uses them: a cgroup in the systemd form
 * (`/kubepods.slice/kubepods-burstable.slice`) is a transient slice unit, started with the
 * properties libcontainer's systemd manager sends from `Apply`, given the unit properties its
 * `Set` sends from a few resource numbers, and stopped on `Destroy`. Also the naming: a name's
 * components and their systemd path (upstream `ToSystemd`). Decisions are pure; the executor
 * is a thin layer over {@linkcode SystemdUnits}. Nothing here knows about pods.
 *
 * @module
 */

import { prop, type SystemdUnits, type UnitProperty } from "./systemd_units.ts";

/** The resource numbers a slice's unit properties come from (0 or absent: not sent). */
export interface SliceResources {
  cpuShares?: number;
  /** CFS quota in µs; -1 means none. */
  cpuQuota?: number;
  cpuPeriod?: number;
  /** Bytes; -1 means none. */
  memoryLimit?: number;
  /** Most tasks; -1 means none. */
  pidsLimit?: number;
  /** CPUs in the kernel's list form (`0-3,6`): `AllowedCPUs`. */
  cpuSet?: string;
}

/**
 * A CPU list (`0-3,6`) as the bitmask `AllowedCPUs` takes: byte i holds CPUs 8i…8i+7, lowest
 * bit first (libcontainer `RangeToBits`); undefined for a malformed list.
 */
export function cpuListBits(list: string): number[] | undefined {
  const bytes: number[] = [];
  for (const part of list.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return undefined;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to > 8191) return undefined;
    for (let cpu = from; cpu <= to; cpu++) {
      const i = cpu >> 3;
      while (bytes.length <= i) bytes.push(0);
      bytes[i]! |= 1 << (cpu & 7);
    }
  }
  while (bytes.length > 1 && bytes[bytes.length - 1] === 0) bytes.pop();
  return bytes.length ? bytes : [0];
}

/**
 * The components of a slice name, the last one of a path (`/a.slice/a-b_c.slice` or
 * `a-b_c.slice` → [a, b-c]: dashes separate, underscores stand for dashes); the root slice
 * (`/`, `-.slice`) has none.
 */
export function sliceComponents(name: string): string[] {
  const base = name.split("/").filter((p) => p !== "").pop() ?? "";
  const bare = base.replace(/\.slice$/, "");
  if (bare === "" || bare === "-") return [];
  return bare.split("-").map((p) => p.replaceAll("_", "-"));
}

/**
 * `/a.slice/a-b.slice/a-b-c.slice`: the cgroup path of the components' slice (upstream
 * `ToSystemd`), each component's dashes turned into underscores; `/` for none.
 */
export function slicePath(parts: readonly string[]): string {
  if (parts.length === 0) return "/";
  const escaped = parts.map((p) => p.replaceAll("-", "_"));
  return escaped.map((_, i) => `/${escaped.slice(0, i + 1).join("-")}.slice`)
    .join("");
}

/** The unit and its parent slice for a systemd-form cgroup path. */
export interface SliceUnit {
  name: string;
  parent: string;
}

/**
 * `/kubepods.slice/kubepods-burstable.slice` → `kubepods-burstable.slice` in
 * `kubepods.slice`; a top-level slice's parent is the root slice `-.slice` (upstream
 * `libctCgroupConfig` splits the path the same way).
 */
export function sliceUnit(path: string): SliceUnit {
  const parts = path.split("/").filter((p) => p !== "");
  const name = parts.at(-1);
  if (!name?.endsWith(".slice")) {
    throw new TypeError(
      `Cgroup "${path}" is not a systemd slice path: with cgroupDriver "systemd" cgroup names end in ".slice"`,
    );
  }
  return { name, parent: parts.at(-2) ?? "-.slice" };
}

/**
 * What starting the slice sends (libcontainer `UnifiedManager.Apply` with no process):
 * a description, `Wants=` the parent slice, accounting on for memory, CPU, IO and tasks,
 * and no default dependencies.
 */
export function sliceStartProperties(unit: SliceUnit): UnitProperty[] {
  return [
    prop.string("Description", `libcontainer container ${unit.name}`),
    prop.strings("Wants", [unit.parent]),
    prop.bool("MemoryAccounting", true),
    prop.bool("CPUAccounting", true),
    prop.bool("IOAccounting", true),
    prop.bool("TasksAccounting", true),
    prop.bool("DefaultDependencies", false),
  ];
}

/** systemd's "infinity" for 64-bit limits. */
const INFINITY = 0xffff_ffff_ffff_ffffn;

/** The CFS period libcontainer assumes when only a quota is given (µs). */
const DEFAULT_PERIOD_US = 100_000;

/**
 * The unit properties for `settings` (libcontainer `genV2ResourcesProperties` as the kubelet
 * feeds it, where an unset value is 0 and sends nothing): `MemoryMax` (-1: infinity),
 * `CPUWeight` from the shares, `CPUQuotaPeriodUSec` (systemd 242 or later) and
 * `CPUQuotaPerSecUSec` (quota per second rounded up to 10 ms; infinity without a quota),
 * `TasksMax` (-1: infinity). Hugepage limits have no unit property: files only.
 */
export function sliceResourceProperties(
  settings: SliceResources,
  systemdVersion: number,
): UnitProperty[] {
  const out: UnitProperty[] = [];
  const memory = settings.memoryLimit ?? 0;
  if (memory !== 0) {
    out.push(prop.uint64("MemoryMax", memory < 0 ? INFINITY : BigInt(memory)));
  }
  if (settings.cpuShares !== undefined && settings.cpuShares !== 0) {
    out.push(prop.uint64("CPUWeight", BigInt(cpuWeight(settings.cpuShares))));
  }
  const quota = settings.cpuQuota ?? 0;
  let period = settings.cpuPeriod ?? 0;
  if (period !== 0 && systemdVersion >= 242) {
    out.push(prop.uint64("CPUQuotaPeriodUSec", BigInt(period)));
  }
  if (quota !== 0 || period !== 0) {
    let perSec = INFINITY;
    if (quota > 0) {
      if (period === 0) period = DEFAULT_PERIOD_US;
      const us = BigInt(Math.floor((quota * 1_000_000) / period));
      perSec = us % 10_000n === 0n ? us : (us / 10_000n + 1n) * 10_000n;
    }
    out.push(prop.uint64("CPUQuotaPerSecUSec", perSec));
  }
  const pids = settings.pidsLimit ?? 0;
  if (pids > 0 || pids === -1) {
    out.push(prop.uint64("TasksMax", pids === -1 ? INFINITY : BigInt(pids)));
  }
  const cpus = settings.cpuSet ? cpuListBits(settings.cpuSet) : undefined;
  if (cpus && systemdVersion >= 244) out.push(prop.bytes("AllowedCPUs", cpus));
  return out;
}

/** Upstream `getCPUWeight`: shares 2…262144 onto weight 1…10000, capped. */
function cpuWeight(shares: number): number {
  if (shares >= 262_144) return 10_000;
  return 1 + Math.floor(((shares - 2) * 9999) / 262_142);
}

/** Slices over a systemd connection, named by their cgroup path. */
export interface Slices {
  /** Starts the slice unit when systemd lacks it (before its directory is made). */
  start(path: string): Promise<void>;
  /** Sends the resources as unit properties. */
  set(path: string, resources: SliceResources): Promise<void>;
  /** Stops the slice unit (systemd removes what it made; the caller removes the rest). */
  stop(path: string): Promise<void>;
}

/** The driver over a systemd connection. */
export function systemdSlices(systemd: SystemdUnits): Slices {
  return {
    async start(path) {
      const unit = sliceUnit(path);
      await systemd.startTransientUnit(unit.name, sliceStartProperties(unit));
    },
    async set(path, resources) {
      const properties = sliceResourceProperties(
        resources,
        await systemd.version(),
      );
      if (properties.length === 0) return;
      await systemd.setUnitProperties(sliceUnit(path).name, properties);
    },
    async stop(path) {
      await systemd.stopUnit(sliceUnit(path).name);
    },
  };
}
