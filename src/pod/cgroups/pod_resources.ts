/**
 * Requests and limits to CRI `LinuxContainerResources`, the way the upstream kubelet maps them:
 * the pod's QoS class (`GetPodQOS`), container CPU shares, CFS quota and period, memory limit,
 * OOM score adjustment by class (`GetContainerOOMScoreAdjust`), hugepage limits for every page
 * size the node has, and the sandbox's pod-level resources and overhead
 * (`calculateSandboxResources`, `convertOverheadToLinuxResources`). Pure functions.
 *
 * @module
 */

import type {
  LinuxContainerResourcesSchema,
  MessageInitShape,
} from "../../runtime/mod.ts";
import { milliValue, quantityValue } from "../../util/quantity.ts";
import type { Container, Pod, ResourceRequirements } from "../types.ts";
import { isSidecar } from "../types.ts";

/** Plain-object init shape of CRI `LinuxContainerResources`. */
export type LinuxResourcesInit = MessageInitShape<
  typeof LinuxContainerResourcesSchema
>;

/** A pod's QoS class. */
export type QOSClass = "Guaranteed" | "Burstable" | "BestEffort";

/** What the node tells the resource mapping. */
export interface NodeResources {
  /** Machine memory in bytes (cAdvisor's `MemoryCapacity`), for Burstable OOM scores. */
  memoryCapacity: number;
  /** Hugepage sizes the kernel offers, as CRI names them (`2MB`, `1GB`), in directory order. */
  hugepageSizes: readonly string[];
  /**
   * The swap controller the node's cgroups have (upstream `swapControllerAvailable`): `v1`
   * with `memory.memsw.*`, `v2` with `memory.swap.max`; absent when none or unknown.
   */
  swapController?: "v1" | "v2";
  /**
   * Every container gets `memory.oom.group=1` (an OOM kills all of its processes): cgroup v2
   * with `singleProcessOOMKill` not true, upstream's default there.
   */
  memoryOomGroup?: boolean;
}

type ResourceList = Record<string, string | number>;

const COMPUTE_RESOURCES = ["cpu", "memory"] as const;
/** Kernel CFS period the kubelet uses (`quotaPeriod`, 100 ms in µs). */
export const CPU_PERIOD_US = 100_000;
const MIN_QUOTA_US = 1000;
const MIN_SHARES = 2;
const MAX_SHARES = 262_144;
const GUARANTEED_OOM_SCORE_ADJ = -997;
const BEST_EFFORT_OOM_SCORE_ADJ = 1000;

function isZero(value: string | number | undefined): boolean {
  return value === undefined || milliValue(value) === 0;
}

/** QoS of one set of requirements (upstream `resourceQOS`). */
function requirementsQOS(r: ResourceRequirements | undefined): QOSClass {
  const req = r?.requests ?? {};
  const lim = r?.limits ?? {};
  if (Object.keys(req).length === 0 && Object.keys(lim).length === 0) {
    return "BestEffort";
  }
  let qos: QOSClass | undefined;
  for (const name of COMPUTE_RESOURCES) {
    const a = req[name] === undefined ? 0 : milliValue(req[name]);
    const b = lim[name] === undefined ? 0 : milliValue(lim[name]);
    if (a !== b) return "Burstable";
    const bestEffort = a === 0;
    if (qos === undefined) qos = bestEffort ? "BestEffort" : "Guaranteed";
    else if (bestEffort !== (qos === "BestEffort")) return "Burstable";
  }
  return qos ?? "BestEffort";
}

/**
 * The pod's QoS class (upstream `GetPodQOS`): `status.qosClass` when set, else computed from
 * pod-level resources when the pod has them, else from every init and regular container.
 */
export function podQOSClass(pod: Pod): QOSClass {
  const recorded = pod.status?.qosClass;
  if (
    recorded === "Guaranteed" || recorded === "Burstable" ||
    recorded === "BestEffort"
  ) {
    return recorded;
  }
  if (pod.spec.resources) return requirementsQOS(pod.spec.resources);
  let qos: QOSClass | undefined;
  for (
    const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]
  ) {
    const q = requirementsQOS(c.resources);
    if (q === "Burstable") return q;
    if (qos === undefined) qos = q;
    else if (qos !== q) return "Burstable";
  }
  return qos ?? "BestEffort";
}

function isNodeCriticalPod(pod: Pod): boolean {
  // upstream IsNodeCriticalPod: critical (static, mirror or high priority) and in the
  // system-node-critical class; a static pod is critical, so the class decides.
  return pod.spec.priorityClassName === "system-node-critical";
}

function memoryRequest(resources: ResourceRequirements | undefined): number {
  const v = resources?.requests?.memory;
  return v === undefined ? 0 : quantityValue(v);
}

/**
 * OOM score adjustment for a container (upstream `GetContainerOOMScoreAdjust`): -997 for
 * node-critical and Guaranteed pods, 1000 for BestEffort, and for Burstable
 * `1000 - 1000 × request / capacity` kept within 3…999; a sidecar scores no higher than the
 * regular container with the smallest memory request.
 */
export function containerOomScoreAdj(
  pod: Pod,
  container: Container,
  memoryCapacity: number,
): number {
  if (isNodeCriticalPod(pod)) return GUARANTEED_OOM_SCORE_ADJ;
  const qos = podQOSClass(pod);
  if (qos === "Guaranteed") return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === "BestEffort") return BEST_EFFORT_OOM_SCORE_ADJ;
  const capacity = Math.max(1, memoryCapacity);
  const score = (request: number) =>
    1000 - Math.trunc((1000 * request) / capacity);
  let adj = score(memoryRequest(container.resources));
  const sidecar =
    (pod.spec.initContainers ?? []).some((c) => c.name === container.name) &&
    isSidecar(container);
  if (sidecar) {
    // never above the regular container with the smallest request (upstream
    // `minRegularContainerMemory`); a score above 1000 makes runc fail every start
    const smallest = Math.min(
      ...pod.spec.containers.map((c) => memoryRequest(c.resources)),
    );
    adj = Math.min(adj, score(smallest));
  }
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) {
    return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  }
  return adj === BEST_EFFORT_OOM_SCORE_ADJ ? adj - 1 : adj;
}

/** CPU shares for millicores (upstream `MilliCPUToShares`). */
export function milliCpuToShares(milli: number): number {
  if (milli === 0) return MIN_SHARES;
  const shares = Math.floor((milli * 1024) / 1000);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

/** CFS quota for a millicore limit and period (upstream `milliCPUToQuota`); 0 = no limit. */
export function milliCpuToQuota(milli: number, periodUs: number): number {
  if (milli === 0) return 0;
  return Math.max(MIN_QUOTA_US, Math.floor((milli * periodUs) / 1000));
}

/**
 * Upstream `calculateLinuxResources` on millicores and bytes: shares from the CPU request
 * (from the limit when no request was given), quota from the limit with the fixed 100 ms
 * period, the memory limit when there is one.
 */
function linuxResources(
  cpuRequestMilli: number | undefined,
  cpuLimitMilli: number,
  memoryLimitBytes: number,
): LinuxResourcesInit {
  const out: LinuxResourcesInit = {
    cpuShares: BigInt(milliCpuToShares(cpuRequestMilli ?? cpuLimitMilli)),
    cpuPeriod: BigInt(CPU_PERIOD_US),
  };
  const quota = milliCpuToQuota(cpuLimitMilli, CPU_PERIOD_US);
  if (quota !== 0) out.cpuQuota = BigInt(quota);
  if (memoryLimitBytes !== 0) out.memoryLimitInBytes = BigInt(memoryLimitBytes);
  return out;
}

function milliOf(value: string | number | undefined): number | undefined {
  return value === undefined ? undefined : milliValue(value);
}

function bytesOf(value: string | number | undefined): number {
  return value === undefined ? 0 : quantityValue(value);
}

/** `2MB` for 2 MiB: the CRI's page size name (upstream `HugePageUnitSizeFromByteSize`). */
export function hugepageSizeName(bytes: number): string | undefined {
  const units = ["B", "KB", "MB", "GB", "TB", "PB"];
  let size = bytes;
  let i = 0;
  while (size >= 1024 && size % 1024 === 0 && i < units.length - 1) {
    size /= 1024;
    i++;
  }
  return i === 0 ? undefined : `${size}${units[i]}`;
}

/**
 * `hugepages-2048kB` (a /sys/kernel/mm/hugepages entry) to `2MB`; undefined for other names.
 */
export function hugepageSizeFromDirName(name: string): string | undefined {
  const m = /^hugepages-(\d+)kB$/.exec(name);
  return m ? hugepageSizeName(Number(m[1]) * 1024) : undefined;
}

/**
 * One limit per page size the node has, 0 unless the container's limits name that size
 * (`hugepages-2Mi: 4Mi`), as upstream `GetHugepageLimitsFromResources`.
 */
export function hugepageLimits(
  container: Container,
  pageSizes: readonly string[],
): { pageSize: string; limit: bigint }[] {
  const wanted = new Map<string, bigint>();
  for (
    const [name, amount] of Object.entries(container.resources?.limits ?? {})
  ) {
    if (!name.startsWith("hugepages-")) continue;
    try {
      const size = hugepageSizeName(quantityValue(name.slice(10)));
      if (size) wanted.set(size, BigInt(quantityValue(amount)));
    } catch {
      // an unparsable size is skipped, as upstream logs and skips it
    }
  }
  return pageSizes.map((pageSize) => ({
    pageSize,
    limit: wanted.get(pageSize) ?? 0n,
  }));
}

/** Resources of one container (upstream `generateLinuxContainerResources`). */
export function containerLinuxResources(
  pod: Pod,
  container: Container,
  node: NodeResources,
): LinuxResourcesInit {
  const req = container.resources?.requests ?? {};
  const lim = container.resources?.limits ?? {};
  const podLim = pod.spec.resources?.limits ?? {};
  // with pod-level resources, a container without its own limit takes the pod's
  const cpuLimit = isZero(lim.cpu) && pod.spec.resources ? podLim.cpu : lim.cpu;
  const memoryLimit = isZero(lim.memory) && pod.spec.resources
    ? podLim.memory
    : lim.memory;
  const out = linuxResources(
    milliOf(req.cpu),
    milliOf(cpuLimit) ?? 0,
    bytesOf(memoryLimit),
  );
  out.oomScoreAdj = BigInt(
    containerOomScoreAdj(pod, container, node.memoryCapacity),
  );
  out.hugepageLimits = hugepageLimits(container, node.hugepageSizes);
  // upstream calculateLinuxResources on cgroup v2 without singleProcessOOMKill
  if (node.memoryOomGroup) out.unified = { "memory.oom.group": "1" };
  // upstream configureContainerSwapResources with the default NoSwap behaviour
  if (node.swapController === "v1") {
    if (out.memoryLimitInBytes !== undefined) {
      out.memorySwapLimitInBytes = out.memoryLimitInBytes;
    }
  } else if (node.swapController === "v2") {
    out.unified = { ...out.unified, "memory.swap.max": "0" };
  }
  return out;
}

/** Quantities per resource name in thousandths of the base unit. */
type MilliList = Map<string, number>;

function add(
  into: MilliList,
  from: ResourceList | MilliList | undefined,
): void {
  const entries = from instanceof Map
    ? from.entries()
    : Object.entries(from ?? {}).map(([k, v]) => [k, milliValue(v)] as const);
  for (const [name, v] of entries) into.set(name, (into.get(name) ?? 0) + v);
}

function max(into: MilliList, from: MilliList): void {
  for (const [name, v] of from) {
    if (!into.has(name) || v > into.get(name)!) into.set(name, v);
  }
}

/**
 * Pod requests or limits without overhead (upstream `PodRequests`/`PodLimits` with the
 * sidecar formula): regular containers and sidecars add up, each other init container
 * counts with the sidecars started before it, and the larger of the two wins; pod-level
 * values replace cpu and memory.
 */
function podTotals(pod: Pod, which: "requests" | "limits"): MilliList {
  const total: MilliList = new Map();
  for (const c of pod.spec.containers) add(total, c.resources?.[which]);
  const sidecars: MilliList = new Map();
  const inits: MilliList = new Map();
  for (const c of pod.spec.initContainers ?? []) {
    const own = c.resources?.[which];
    if (isSidecar(c)) {
      add(total, own);
      add(sidecars, own);
      max(inits, sidecars);
    } else {
      const step: MilliList = new Map();
      add(step, own);
      add(step, sidecars);
      max(inits, step);
    }
  }
  max(total, inits);
  const podLevel = pod.spec.resources?.[which];
  for (const name of COMPUTE_RESOURCES) {
    const v = podLevel?.[name];
    if (v !== undefined) total.set(name, milliValue(v));
  }
  return total;
}

/**
 * The pod's effective requests in thousandths of their unit (millicores, millibytes), overhead
 * included (upstream `PodRequests`, as admission and the scheduler count them).
 */
export function podRequests(pod: Pod): ReadonlyMap<string, number> {
  const req = podTotals(pod, "requests");
  overheadIncluded(req, pod.spec.overhead, false);
  return req;
}

/** The sandbox's `linux.resources` (upstream `calculateSandboxResources`). */
export function sandboxLinuxResources(pod: Pod): LinuxResourcesInit {
  const req = podTotals(pod, "requests");
  const lim = podTotals(pod, "limits");
  return linuxResources(
    req.get("cpu"),
    lim.get("cpu") ?? 0,
    Math.ceil((lim.get("memory") ?? 0) / 1000),
  );
}

/** The sandbox's `linux.overhead` (upstream `convertOverheadToLinuxResources`): empty without overhead. */
export function overheadLinuxResources(pod: Pod): LinuxResourcesInit {
  const o = pod.spec.overhead;
  if (!o) return {};
  const cpu = milliOf(o.cpu) ?? 0;
  return linuxResources(cpu, cpu, bytesOf(o.memory));
}

/** The pod cgroup's settings (upstream `ResourceConfig`); absent fields are left alone. */
export interface PodCgroupConfig {
  cpuShares: number;
  cpuQuota?: number;
  cpuPeriod?: number;
  memoryLimit?: number;
}

function overheadIncluded(
  totals: MilliList,
  overhead: ResourceList | undefined,
  onlyPresent: boolean,
): void {
  for (const [name, v] of Object.entries(overhead ?? {})) {
    if (onlyPresent && !totals.has(name)) continue;
    totals.set(name, (totals.get(name) ?? 0) + milliValue(v));
  }
}

/**
 * Settings of the pod's own cgroup (upstream `ResourceConfigForPod`, CFS quota on): shares
 * from the pod's requests (overhead included); a Guaranteed pod also gets its CPU quota and
 * memory limit, a Burstable one each of them only when every container declares that limit
 * (or the pod does), a BestEffort one the minimum shares.
 */
export function podCgroupConfig(pod: Pod): PodCgroupConfig {
  const req = podTotals(pod, "requests");
  overheadIncluded(req, pod.spec.overhead, false);
  const lim = podTotals(pod, "limits");
  overheadIncluded(lim, pod.spec.overhead, true);
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  const declared = (name: "cpu" | "memory") =>
    !isZero(pod.spec.resources?.limits?.[name]) ||
    all.every((c) => !isZero(c.resources?.limits?.[name]));
  const cpuShares = milliCpuToShares(req.get("cpu") ?? 0);
  const cpuQuota = milliCpuToQuota(lim.get("cpu") ?? 0, CPU_PERIOD_US);
  const memoryLimit = Math.ceil((lim.get("memory") ?? 0) / 1000);
  const qos = podQOSClass(pod);
  if (qos === "BestEffort") return { cpuShares: MIN_SHARES };
  const out: PodCgroupConfig = { cpuShares };
  if (qos === "Guaranteed" || declared("cpu")) {
    out.cpuQuota = cpuQuota;
    out.cpuPeriod = CPU_PERIOD_US;
  }
  if (qos === "Guaranteed" || declared("memory")) out.memoryLimit = memoryLimit;
  return out;
}
