/**
 * Pure decisions of in-place resize (upstream pkg/kubelet/allocation): what a pod's
 * allocation is, the pod as allocated, whether a resize can be granted now (Infeasible,
 * Deferred or accepted) and whether an allocated resize is still being applied.
 *
 * @module
 */

import type { Container, Pod, ResourceRequirements } from "../types.ts";
import { isSidecar } from "../types.ts";
import { milliValue, quantityValue } from "../../util/quantity.ts";
import { podQOSClass, podRequests } from "../cgroups/pod_resources.ts";

/** Resources per container name. */
export type ContainerAllocations = ReadonlyMap<string, ResourceRequirements>;

/** Upstream `allocationFromPod`: every regular container and every sidecar. */
export function allocationFromPod(pod: Pod): Map<string, ResourceRequirements> {
  const out = new Map<string, ResourceRequirements>();
  for (const c of pod.spec.containers) out.set(c.name, copy(c.resources));
  for (const c of pod.spec.initContainers ?? []) {
    if (isSidecar(c)) out.set(c.name, copy(c.resources));
  }
  return out;
}

function copy(r: ResourceRequirements | undefined): ResourceRequirements {
  const out: ResourceRequirements = {};
  if (r?.limits && Object.keys(r.limits).length) out.limits = { ...r.limits };
  if (r?.requests && Object.keys(r.requests).length) {
    out.requests = { ...r.requests };
  }
  return out;
}

function sameList(
  a: Record<string, string | number> | undefined,
  b: Record<string, string | number> | undefined,
): boolean {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  for (const k of keys) {
    const x = a?.[k];
    const y = b?.[k];
    if (x === undefined || y === undefined) return false;
    // milli precision is what the API keeps for cpu and memory alike
    if (milliValue(x) !== milliValue(y)) return false;
  }
  return true;
}

/** Semantic equality of two requirements (quantities compared by value). */
export function sameResources(
  a: ResourceRequirements | undefined,
  b: ResourceRequirements | undefined,
): boolean {
  return sameList(a?.limits, b?.limits) && sameList(a?.requests, b?.requests);
}

/**
 * Upstream `updatePodFromAllocation`: the pod with each container's resources replaced by
 * its allocation; `changed` when any differs from the spec.
 */
export function podWithAllocation(
  pod: Pod,
  allocated: ContainerAllocations | undefined,
): { pod: Pod; changed: boolean } {
  if (!allocated) return { pod, changed: false };
  let changed = false;
  const swap = (c: Container): Container => {
    const a = allocated.get(c.name);
    if (!a || sameResources(c.resources, a)) return c;
    changed = true;
    return { ...c, resources: copy(a) };
  };
  const containers = pod.spec.containers.map(swap);
  const initContainers = pod.spec.initContainers?.map(swap);
  if (!changed) return { pod, changed };
  return {
    pod: {
      ...pod,
      spec: {
        ...pod.spec,
        containers,
        ...(initContainers ? { initContainers } : {}),
      },
    },
    changed,
  };
}

/** The outcome of evaluating a pending resize. */
export type ResizeDecision =
  | { kind: "none" }
  | { kind: "accept" }
  | { kind: "infeasible"; message: string }
  | { kind: "deferred"; message: string };

/** What {@linkcode decideResize} needs besides the pod. */
export interface ResizeContext {
  /** The pod as currently allocated (its spec's resources replaced by the allocation). */
  allocated: Pod;
  /** Whether the spec differs from the allocation at all. */
  changed: boolean;
  /** Node allocatable: millicores and bytes. */
  allocatable: { cpuMillis: number; memoryBytes: number };
  /**
   * Admission of `pod` (the desired resize) beside the other active pods as allocated;
   * a refusal's message makes the resize Deferred.
   */
  admit(pod: Pod): { admit: true } | { admit: false; message: string };
  /** The node has swap for this pod's containers (resize of memory then unsupported). */
  swapFor?: (pod: Pod, c: Container) => boolean;
}

function isStatic(pod: Pod): boolean {
  const source = pod.metadata.annotations?.["kubernetes.io/config.source"];
  return source !== undefined && source !== "api";
}

/**
 * Upstream `handlePodResourcesResize` + `canResizePod`: nothing to do when the spec matches
 * the allocation; Infeasible for static pods, for a memory request change of a container with
 * swap whose policy is not RestartContainer, and for requests beyond node allocatable;
 * Deferred when admission beside the other pods refuses; else accepted.
 */
export function decideResize(pod: Pod, ctx: ResizeContext): ResizeDecision {
  if (!ctx.changed) return { kind: "none" };
  if (isStatic(pod)) {
    return {
      kind: "infeasible",
      message: "In-place resize of static-pods is not supported",
    };
  }
  if (ctx.swapFor && swapBlocksResize(pod, ctx.allocated, ctx.swapFor)) {
    return {
      kind: "infeasible",
      message: "In-place resize of containers with swap is not supported.",
    };
  }
  const requests = podRequests(pod);
  const cpu = Math.ceil(requests.get("cpu") ?? 0);
  const memory = Math.ceil((requests.get("memory") ?? 0) / 1000);
  const { cpuMillis, memoryBytes } = ctx.allocatable;
  if (cpu > cpuMillis || memory > memoryBytes) {
    const detail = memory > memoryBytes
      ? `memory, requested: ${memory}, capacity: ${memoryBytes}`
      : `cpu, requested: ${cpu}, capacity: ${cpuMillis}`;
    return {
      kind: "infeasible",
      message: `Node didn't have enough capacity: ${detail}`,
    };
  }
  const admitted = ctx.admit(pod);
  if (!admitted.admit) return { kind: "deferred", message: admitted.message };
  return { kind: "accept" };
}

function swapBlocksResize(
  desired: Pod,
  allocated: Pod,
  swapFor: (pod: Pod, c: Container) => boolean,
): boolean {
  const byName = new Map<string, Container>();
  for (const c of allocatedContainers(allocated)) byName.set(c.name, c);
  for (const want of allocatedContainers(desired)) {
    const have = byName.get(want.name);
    if (!have) continue;
    const a = want.resources?.requests?.["memory"];
    const b = have.resources?.requests?.["memory"];
    const same = a === undefined || b === undefined
      ? a === b
      : quantityValue(a) === quantityValue(b);
    const restarts = have.resizePolicy?.find((p) =>
      p.resourceName === "memory"
    )?.restartPolicy === "RestartContainer";
    if (
      !same && !restarts && (swapFor(desired, want) || swapFor(allocated, have))
    ) {
      return true;
    }
  }
  return false;
}

function allocatedContainers(pod: Pod): Container[] {
  return [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
}

/** The four figures a resize acts on (upstream `containerResources`). */
export interface ResizeFigures {
  cpuRequestMilli: number;
  cpuLimitMilli: number;
  memoryRequest: number;
  memoryLimit: number;
}

/** Upstream `containerResourcesFromRequirements`. */
export function resizeFigures(
  r: ResourceRequirements | undefined,
): ResizeFigures {
  const get = (
    list: Record<string, string | number> | undefined,
    name: string,
    value: (q: string | number) => number,
  ) => list?.[name] === undefined ? 0 : value(list[name]!);
  return {
    cpuRequestMilli: get(r?.requests, "cpu", milliValue),
    cpuLimitMilli: get(r?.limits, "cpu", milliValue),
    memoryRequest: get(r?.requests, "memory", quantityValue),
    memoryLimit: get(r?.limits, "memory", quantityValue),
  };
}

/** Same four figures (upstream's comparison of desired and actuated resources). */
export function sameFigures(a: ResizeFigures, b: ResizeFigures): boolean {
  return a.cpuRequestMilli === b.cpuRequestMilli &&
    a.cpuLimitMilli === b.cpuLimitMilli &&
    a.memoryRequest === b.memoryRequest && a.memoryLimit === b.memoryLimit;
}

/**
 * Upstream `isPodResizeInProgress`: a running resizable container whose allocation is not
 * yet what the kubelet applied to it.
 */
export function resizeInProgress(
  allocated: Pod,
  running: (name: string) => boolean,
  actuated: (name: string) => ResourceRequirements | undefined,
): boolean {
  const resizable = [
    ...allocated.spec.containers,
    ...(allocated.spec.initContainers ?? []).filter(isSidecar),
  ];
  return resizable.some((c) => {
    if (!running(c.name)) return false;
    return !sameFigures(
      resizeFigures(c.resources),
      resizeFigures(actuated(c.name)),
    );
  });
}

/** Upstream's sort of pending resizes: decreases first, then priority, Guaranteed first. */
export function pendingOrder(
  a: { pod: Pod; increasing: boolean; pendingSince?: string },
  b: { pod: Pod; increasing: boolean; pendingSince?: string },
): number {
  if (!a.increasing) return -1;
  if (!b.increasing) return 1;
  const pa = a.pod.spec.priority ?? 0;
  const pb = b.pod.spec.priority ?? 0;
  if (pa !== pb) return pb - pa;
  const ga = podQOSClass(a.pod) === "Guaranteed";
  const gb = podQOSClass(b.pod) === "Guaranteed";
  if (ga !== gb) return ga ? -1 : 1;
  if (!a.pendingSince) return 1;
  if (!b.pendingSince) return -1;
  return a.pendingSince < b.pendingSince ? -1 : 1;
}
