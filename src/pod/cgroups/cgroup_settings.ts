/**
 * What the kubelet's own cgroups should hold, decided without touching the host: the
 * `kubepods` cgroup's limits from node allocatable (upstream `enforceNodeAllocatableCgroups`
 * with `getCgroupConfig`), the QoS tiers' CPU shares and hugepage limits (upstream
 * `qosContainerManager.UpdateCgroups`), a pod cgroup's settings (upstream
 * `ResourceConfigForPod` plus `podPidsLimit`) and the interface files each setting is
 * written to on cgroup v1 and v2 (libcontainer's `fs`/`fs2` writers), as data tables. Pure.
 *
 * @module
 */

import { milliValue, quantityValue } from "../../util/quantity.ts";
import {
  hugepageSizeName,
  milliCpuToShares,
  podCgroupConfig,
  podQOSClass,
  podRequests,
} from "./pod_resources.ts";
import type { Pod } from "../types.ts";

/** A cgroup's settings (upstream `ResourceConfig`); absent fields are left as they are. */
export interface CgroupSettings {
  cpuShares?: number;
  /** CFS quota in µs; -1 means none. */
  cpuQuota?: number;
  cpuPeriod?: number;
  /** Bytes; -1 means none. */
  memoryLimit?: number;
  /** Most tasks; -1 means none. */
  pidsLimit?: number;
  /** Per CRI page size name (`2MB`): bytes, or `"max"` for unbounded. */
  hugepageLimits?: Record<string, number | "max">;
  /** CPUs the cgroup may run on, in the kernel's list form (`0-3`). */
  cpuSet?: string;
}

/** The cgroup file system generation the host mounts at /sys/fs/cgroup. */
export type CgroupVersion = "v1" | "v2";

/** One interface file write: `controller` is the v1 hierarchy and the v2 controller. */
export interface CgroupFileWrite {
  controller: string;
  file: string;
  value: string;
  /** Skipped when the kernel lacks the file (hugepage reservations before Linux 5.7). */
  optional?: true;
}

/** What upstream writes for an "unbounded" hugepage limit (2^62 bytes), on v1 and v2. */
const UNBOUNDED_HUGEPAGES = "4611686018427387904";

/** cgroup v1: one file per setting, in the order libcontainer writes them. */
const V1_FILES: readonly {
  controller: string;
  file: string;
  value: (s: CgroupSettings) => number | string | undefined;
}[] = [
  { controller: "cpu", file: "cpu.shares", value: (s) => s.cpuShares },
  { controller: "cpu", file: "cpu.cfs_period_us", value: (s) => s.cpuPeriod },
  { controller: "cpu", file: "cpu.cfs_quota_us", value: (s) => s.cpuQuota },
  {
    controller: "memory",
    file: "memory.limit_in_bytes",
    value: (s) => s.memoryLimit,
  },
  {
    controller: "pids",
    file: "pids.max",
    value: (s) => limitOrMax(s.pidsLimit),
  },
  { controller: "cpuset", file: "cpuset.cpus", value: (s) => s.cpuSet },
];

/** cgroup v2: `cpu.max` joins quota and period, "max" replaces -1. */
const V2_FILES: typeof V1_FILES = [
  {
    controller: "cpu",
    file: "cpu.weight",
    value: (s) =>
      s.cpuShares === undefined ? undefined : cpuSharesToWeight(s.cpuShares),
  },
  {
    controller: "cpu",
    file: "cpu.max",
    value: (s) =>
      s.cpuQuota === undefined && s.cpuPeriod === undefined
        ? undefined
        : `${limitOrMax(s.cpuQuota ?? -1)} ${s.cpuPeriod ?? 100_000}`,
  },
  {
    controller: "memory",
    file: "memory.max",
    value: (s) => limitOrMax(s.memoryLimit),
  },
  {
    controller: "pids",
    file: "pids.max",
    value: (s) => limitOrMax(s.pidsLimit),
  },
  { controller: "cpuset", file: "cpuset.cpus", value: (s) => s.cpuSet },
];

function limitOrMax(v: number | undefined): number | string | undefined {
  if (v === undefined) return undefined;
  return v < 0 ? "max" : v;
}

/**
 * cgroup v2 `cpu.weight` for v1 shares (upstream `CpuSharesToCPUWeight`): 2…262144 onto
 * 1…10000 linearly.
 */
export function cpuSharesToWeight(shares: number): number {
  return 1 + Math.floor(((shares - 2) * 9999) / 262_142);
}

/**
 * The files a cgroup's settings go to; hugepage limits only for the sizes in
 * `hugetlbSizes` (what the host's hugetlb controller offers; none without one).
 */
export function cgroupFileWrites(
  settings: CgroupSettings,
  version: CgroupVersion,
  hugetlbSizes: readonly string[] = [],
): CgroupFileWrite[] {
  const out: CgroupFileWrite[] = [];
  for (const row of version === "v1" ? V1_FILES : V2_FILES) {
    const v = row.value(settings);
    if (v !== undefined) {
      out.push({ controller: row.controller, file: row.file, value: `${v}` });
    }
  }
  for (const [size, limit] of Object.entries(settings.hugepageLimits ?? {})) {
    if (!hugetlbSizes.includes(size)) continue;
    const suffix = version === "v1" ? "limit_in_bytes" : "max";
    const value = limit === "max" ? UNBOUNDED_HUGEPAGES : `${limit}`;
    out.push({
      controller: "hugetlb",
      file: `hugetlb.${size}.${suffix}`,
      value,
    });
    // libcontainer limits the reservations to the same value where the kernel has them
    out.push({
      controller: "hugetlb",
      file: `hugetlb.${size}.rsvd.${suffix}`,
      value,
      optional: true,
    });
  }
  return out;
}

/** The node's capacity as top-level cgroups see it (upstream `internalCapacity`). */
export interface CgroupCapacity {
  cpuMillis: number;
  memoryBytes: number;
  /** `min(kernel.pid_max, kernel.threads-max)`; absent when unknown. */
  pids?: number;
  /** Bytes of preallocated hugepages per CRI page size name (`2MB`). */
  hugepages?: Record<string, number>;
}

/** Node allocatable enforcement settings from the KubeletConfiguration. */
export interface NodeAllocatableConfig {
  /** `enforceNodeAllocatable` (default ["pods"]). */
  enforce?: readonly string[];
  kubeReserved?: Record<string, string>;
  systemReserved?: Record<string, string>;
  /** `kubeReservedCgroup`: limited to `kubeReserved` with "kube-reserved" enforced. */
  kubeReservedCgroup?: string;
  /** `systemReservedCgroup`: limited to `systemReserved` with "system-reserved" enforced. */
  systemReservedCgroup?: string;
}

/** `hugepages-2Mi` → `2MB`; undefined for other names or a bad size. */
export function hugepageResourceSize(name: string): string | undefined {
  if (!name.startsWith("hugepages-")) return undefined;
  try {
    return hugepageSizeName(quantityValue(name.slice("hugepages-".length)));
  } catch {
    return undefined;
  }
}

function reservedOf(
  config: NodeAllocatableConfig,
  pick: (name: string) => boolean,
  convert: (v: string) => number,
): number {
  let total = 0;
  for (const list of [config.systemReserved, config.kubeReserved]) {
    for (const [name, v] of Object.entries(list ?? {})) {
      if (pick(name)) total += convert(v);
    }
  }
  return total;
}

/**
 * The `kubepods` cgroup's settings (upstream `enforceNodeAllocatableCgroups`): with "pods" in
 * `enforceNodeAllocatable`, capacity minus system- and kube-reserved (never below 0; the hard
 * eviction threshold is not subtracted, so pods may use memory up to it), the hugepages'
 * allocatable also taken off memory; without it, the whole capacity. CPU becomes shares,
 * hugepages per-size limits.
 */
export function kubepodsSettings(
  capacity: CgroupCapacity,
  config: NodeAllocatableConfig,
): CgroupSettings {
  const enforced = (config.enforce ?? ["pods"]).includes("pods");
  const minus = (value: number, reserved: number) =>
    enforced ? Math.max(0, value - reserved) : value;
  const bytes = (v: string) => quantityValue(v);
  const hugepages: Record<string, number> = {};
  for (const [size, total] of Object.entries(capacity.hugepages ?? {})) {
    hugepages[size] = minus(
      total,
      reservedOf(config, (n) => hugepageResourceSize(n) === size, bytes),
    );
  }
  let memory = minus(
    capacity.memoryBytes,
    reservedOf(config, (n) => n === "memory", bytes),
  );
  if (enforced) {
    for (const v of Object.values(hugepages)) memory = Math.max(0, memory - v);
  }
  const out: CgroupSettings = {
    cpuShares: milliCpuToShares(
      minus(
        capacity.cpuMillis,
        reservedOf(config, (n) => n === "cpu", milliValue),
      ),
    ),
    memoryLimit: memory,
  };
  if (capacity.pids !== undefined) {
    out.pidsLimit = minus(
      capacity.pids,
      reservedOf(config, (n) => n === "pid", bytes),
    );
  }
  if (Object.keys(hugepages).length) out.hugepageLimits = hugepages;
  // upstream `getCgroupConfig` with the none CPU manager policy: every CPU, so that systemd
  // knows the cpuset of the slice and never drops it
  const cpus = Math.floor(capacity.cpuMillis / 1000);
  if (cpus > 0) out.cpuSet = cpus === 1 ? "0" : `0-${cpus - 1}`;
  return out;
}

/** One existing cgroup node allocatable enforcement limits, with its event wording. */
export interface ReservedCgroupPlan {
  cgroup: string;
  settings: CgroupSettings;
  /** "System Reserved", "Kube Reserved Compressible", … */
  label: string;
  /** "system reserved", "kube reserved" */
  short: string;
}

/**
 * The reserved cgroups to limit (upstream `enforceExistingCgroup` for the
 * `system-reserved`, `kube-reserved` and their `-compressible` keys): the reservation's
 * memory, CPU shares, pids and hugepages (every other page size 0, as upstream's update
 * writes them), or only the CPU shares for a compressible key. A key whose cgroup or
 * reservation is missing gives an error instead (upstream: "not configured properly").
 */
export function reservedCgroupPlans(
  config: NodeAllocatableConfig,
  hugepageSizes: readonly string[],
): (ReservedCgroupPlan | { error: string; label: string })[] {
  const keys = [
    ["system-reserved", "System Reserved", false],
    ["kube-reserved", "Kube Reserved", false],
    ["system-reserved-compressible", "System Reserved Compressible", true],
    ["kube-reserved-compressible", "Kube Reserved Compressible", true],
  ] as const;
  const out: (ReservedCgroupPlan | { error: string; label: string })[] = [];
  for (const [key, label, compressible] of keys) {
    if (!(config.enforce ?? []).includes(key)) continue;
    const system = key.startsWith("system");
    const cgroup =
      (system ? config.systemReservedCgroup : config.kubeReservedCgroup) ?? "";
    const list = system ? config.systemReserved : config.kubeReserved;
    if (!list) {
      out.push({
        label,
        error: `"${cgroup}" cgroup is not configured properly`,
      });
      continue;
    }
    const settings: CgroupSettings = {};
    if (list.cpu !== undefined) {
      settings.cpuShares = milliCpuToShares(milliValue(list.cpu));
    }
    if (!compressible) {
      if (list.memory !== undefined) {
        settings.memoryLimit = quantityValue(list.memory);
      }
      if (list.pid !== undefined) settings.pidsLimit = quantityValue(list.pid);
      const wanted = new Map<string, number>();
      for (const [name, v] of Object.entries(list)) {
        const size = hugepageResourceSize(name);
        if (size) wanted.set(size, quantityValue(v));
      }
      if (hugepageSizes.length) {
        settings.hugepageLimits = Object.fromEntries(
          hugepageSizes.map((s) => [s, wanted.get(s) ?? 0]),
        );
      }
    }
    out.push({
      cgroup,
      settings,
      label,
      short: system ? "system reserved" : "kube reserved",
    });
  }
  return out;
}

/** The QoS tiers below `kubepods`. */
export type QosTier = "burstable" | "besteffort";

/**
 * Settings of `kubepods`, `burstable` and `besteffort` from the active pods (upstream
 * `UpdateCgroups` without the alpha QOSReserved and MemoryQoS gates): burstable shares from
 * the sum of the Burstable pods' CPU requests (overhead included), besteffort the minimum 2,
 * and every hugepage size unbounded on all three.
 */
export function qosTierSettings(
  activePods: readonly Pod[],
  hugepageSizes: readonly string[],
): Record<"kubepods" | QosTier, CgroupSettings> {
  let burstableMilli = 0;
  for (const pod of activePods) {
    if (podQOSClass(pod) !== "Burstable") continue;
    burstableMilli += podRequests(pod).get("cpu") ?? 0;
  }
  const unbounded = hugepageSizes.length
    ? {
      hugepageLimits: Object.fromEntries(
        hugepageSizes.map((s) => [s, "max" as const]),
      ),
    }
    : {};
  return {
    kubepods: { ...unbounded },
    burstable: { cpuShares: milliCpuToShares(burstableMilli), ...unbounded },
    besteffort: { cpuShares: 2, ...unbounded },
  };
}

/**
 * A pod cgroup's settings (upstream `ResourceConfigForPod` and the pod container manager):
 * CPU and memory from {@linkcode podCgroupConfig} (overhead included), one hugepage limit per
 * size the node has (the pod's `hugepages-<size>` request, else 0) and `podPidsLimit` when
 * positive.
 */
export function podCgroupSettings(
  pod: Pod,
  options: { hugepageSizes?: readonly string[]; podPidsLimit?: number } = {},
): CgroupSettings {
  const base = podCgroupConfig(pod);
  const out: CgroupSettings = { cpuShares: base.cpuShares };
  if (base.cpuPeriod !== undefined) out.cpuPeriod = base.cpuPeriod;
  if (base.cpuQuota !== undefined) {
    out.cpuQuota = base.cpuQuota > 0 ? base.cpuQuota : -1;
  }
  if (base.memoryLimit !== undefined && base.memoryLimit > 0) {
    out.memoryLimit = base.memoryLimit;
  }
  const sizes = options.hugepageSizes ?? [];
  if (sizes.length) {
    const wanted = new Map<string, number>();
    for (const [name, milli] of podRequests(pod)) {
      const size = hugepageResourceSize(name);
      if (size) wanted.set(size, Math.ceil(milli / 1000));
    }
    out.hugepageLimits = Object.fromEntries(
      sizes.map((s) => [s, wanted.get(s) ?? 0]),
    );
  }
  const pids = options.podPidsLimit ?? -1;
  if (pids > 0) out.pidsLimit = pids;
  return out;
}

/**
 * `pod<uid>` directory names (the systemd driver's `kubepods-burstable-pod<uid>.slice`, the
 * uid's dashes as underscores) to uids; other names are not pod cgroups.
 */
export function podUidFromCgroupName(name: string): string | undefined {
  let base = name;
  if (base.endsWith(".slice")) {
    // upstream `ParseSystemdToCgroupName`: the last dash-separated part, unescaped
    base = (base.slice(0, -".slice".length).split("-").pop() ?? "")
      .replaceAll("_", "-");
  }
  return base.startsWith("pod") && base.length > 3 ? base.slice(3) : undefined;
}

/**
 * Pod cgroups to remove (upstream `cleanupOrphanedPodCgroups`): those whose pod the kubelet
 * does not know, neither desired nor still handled by a pod worker.
 */
export function orphanedPodCgroups(
  found: ReadonlyMap<string, string>,
  known: (uid: string) => boolean,
): [uid: string, path: string][] {
  return [...found].filter(([uid]) => !known(uid));
}
