/**
 * Which pod goes first (upstream `rankMemoryPressure`, `rankDiskPressureFunc`,
 * `rankPIDPressure`) and the eviction message (`evictionMessage`). Pure: the pods' usage
 * comes in measured.
 * @module
 */
import type { Pod } from "../pod/mod.ts";
import { podRequests } from "../pod/mod.ts";
import { formatBinaryQuantity } from "../status/mod.ts";
import type { ReclaimResource } from "./thresholds.ts";

/** What one container of a pod uses. */
export interface ContainerUsage {
  name: string;
  /** Working set bytes. */
  memoryBytes?: number;
  /** Writable layer bytes and inodes. */
  rootfsBytes?: number;
  rootfsInodes?: number;
  /** Log bytes and inodes. */
  logsBytes?: number;
  logsInodes?: number;
}

/** What one pod uses (upstream's `PodStats` as eviction reads it). */
export interface PodUsage {
  /** The pod's working set bytes. */
  memoryBytes?: number;
  processes?: number;
  containers: readonly ContainerUsage[];
  /** Local volumes (emptyDir, hostPath …) by volume name. */
  volumes: ReadonlyMap<string, { bytes: number; inodes: number }>;
}

/** Which filesystems a disk ranking counts (upstream `fsStatsType`). */
export type FsStatsKind = "root" | "logs" | "localVolumes";

/** Pod usage by UID; a missing entry means no stats were found. */
export type UsageOf = (pod: Pod) => PodUsage | undefined;

type Compare = (a: Pod, b: Pod) => number;

/** true before false (upstream `cmpBool`). */
function trueFirst(a: boolean, b: boolean): number {
  return a === b ? 0 : a ? -1 : 1;
}

function priority(a: Pod, b: Pod): number {
  const pa = a.spec.priority ?? 0;
  const pb = b.spec.priority ?? 0;
  return pa === pb ? 0 : pa > pb ? 1 : -1;
}

/** The pod's request for `resource` in whole units, overhead included. */
export function podRequest(pod: Pod, resource: string): number {
  return Math.trunc((podRequests(pod).get(resource) ?? 0) / 1000);
}

function withStats(
  usage: UsageOf,
  compare: (a: PodUsage, b: PodUsage, pa: Pod, pb: Pod) => number,
): Compare {
  return (a, b) => {
    const ua = usage(a);
    const ub = usage(b);
    // a pod without stats goes first
    if (!ua || !ub) return trueFirst(!ua, !ub);
    return compare(ua, ub, a, b);
  };
}

function memoryOf(u: PodUsage): number {
  return u.memoryBytes ?? 0;
}

/** Upstream `podDiskUsage`: bytes or inodes over the measured filesystems. */
export function podDiskUsage(
  pod: Pod,
  u: PodUsage,
  kinds: readonly FsStatsKind[],
  resource: "ephemeral-storage" | "inodes",
): number {
  const bytes = resource === "ephemeral-storage";
  let total = 0;
  for (const c of u.containers) {
    if (kinds.includes("root")) {
      total += (bytes ? c.rootfsBytes : c.rootfsInodes) ?? 0;
    }
    if (kinds.includes("logs")) {
      total += (bytes ? c.logsBytes : c.logsInodes) ?? 0;
    }
  }
  if (kinds.includes("localVolumes")) {
    for (const v of pod.spec.volumes ?? []) {
      if (!v.hostPath && !v.emptyDir) continue;
      const used = u.volumes.get(v.name);
      if (used) total += bytes ? used.bytes : used.inodes;
    }
  }
  return total;
}

function ordered(compares: readonly Compare[]): Compare {
  return (a, b) => {
    for (const c of compares) {
      const r = c(a, b);
      if (r !== 0) return r;
    }
    return 0;
  };
}

/**
 * Pods in eviction order for `resource` (upstream's rank functions): memory — over its
 * request first, then lower priority, then the larger use above its request; disk — the
 * same over `kinds`; pids — lower priority, then more processes. Ties keep input order.
 */
export function rankPods(
  pods: readonly Pod[],
  usage: UsageOf,
  options: { resource: ReclaimResource; kinds?: readonly FsStatsKind[] },
): Pod[] {
  const { resource } = options;
  let compare: Compare;
  if (resource === "memory") {
    compare = ordered([
      withStats(usage, (ua, ub, a, b) =>
        trueFirst(
          memoryOf(ua) > podRequest(a, "memory"),
          memoryOf(ub) > podRequest(b, "memory"),
        )),
      priority,
      withStats(usage, (ua, ub, a, b) =>
        Math.sign(
          (memoryOf(ub) - podRequest(b, "memory")) -
            (memoryOf(ua) - podRequest(a, "memory")),
        )),
    ]);
  } else if (resource === "pids") {
    compare = ordered([
      priority,
      withStats(
        usage,
        (ua, ub) => Math.sign((ub.processes ?? 0) - (ua.processes ?? 0)),
      ),
    ]);
  } else {
    const kinds = options.kinds ?? ["root", "logs", "localVolumes"];
    const used = (p: Pod, u: PodUsage) => podDiskUsage(p, u, kinds, resource);
    compare = ordered([
      withStats(usage, (ua, ub, a, b) =>
        trueFirst(
          used(a, ua) > podRequest(a, resource),
          used(b, ub) > podRequest(b, resource),
        )),
      priority,
      // upstream subtracts the ephemeral-storage request for inodes too
      withStats(usage, (ua, ub, a, b) =>
        Math.sign(
          (used(b, ub) - podRequest(b, "ephemeral-storage")) -
            (used(a, ua) - podRequest(a, "ephemeral-storage")),
        )),
    ]);
  }
  return [...pods].sort(compare);
}

/** A quantity as Go prints it: bytes base-1024, counts base-1000 (`k`, `M` …). */
export function formatResource(
  resource: ReclaimResource,
  value: number,
): string {
  if (resource === "memory" || resource === "ephemeral-storage") {
    return formatBinaryQuantity(value);
  }
  const suffixes = ["", "k", "M", "G", "T", "P", "E"];
  let v = Math.trunc(value);
  let i = 0;
  while (v !== 0 && v % 1000 === 0 && i < suffixes.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v}${suffixes[i]}`;
}

function requestText(pod: Pod, container: string, resource: string): string {
  const all = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
  const c = all.find((x) => x.name === container);
  const raw = c?.resources?.requests?.[resource];
  return raw === undefined ? "0" : String(raw);
}

function requestValue(pod: Pod, container: string, resource: string): number {
  const all = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
  const c = all.find((x) => x.name === container);
  return podRequest({
    ...pod,
    spec: { ...pod.spec, containers: c ? [c] : [], initContainers: [] },
  }, resource);
}

/**
 * Upstream `evictionMessage`: `The node was low on resource: <r>. `, the threshold and what
 * was available, then each container using more than its request (memory: working set;
 * ephemeral-storage: writable layer plus logs).
 */
export function evictionMessage(
  pod: Pod,
  input: {
    resource: ReclaimResource;
    usage: PodUsage | undefined;
    met?: { quantity: number; available: number } | undefined;
  },
): string {
  const { resource } = input;
  let message = `The node was low on resource: ${resource}. `;
  if (input.met) {
    message += `Threshold quantity: ${
      formatResource(resource, input.met.quantity)
    }, available: ${formatResource(resource, input.met.available)}. `;
  }
  if (!input.usage) return message;
  for (const c of input.usage.containers) {
    let used: number | undefined;
    if (resource === "memory") used = c.memoryBytes;
    else if (
      resource === "ephemeral-storage" && c.rootfsBytes !== undefined &&
      c.logsBytes !== undefined
    ) used = c.rootfsBytes + c.logsBytes;
    if (used === undefined) continue;
    if (used > requestValue(pod, c.name, resource)) {
      message += `Container ${c.name} was using ${
        formatResource(resource, used)
      }, request is ${
        requestText(pod, c.name, resource)
      }, has larger consumption of ${resource}. `;
    }
  }
  return message;
}
