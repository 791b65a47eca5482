/**
 * The pure plan of applying an allocated resize to a running pod (upstream
 * `computePodResizeAction` and the ordering of `doPodResizeAction`): which running containers
 * restart (a changed resource whose `resizePolicy` is RestartContainer), which are updated in
 * place and in what order, and the pod cgroup steps around them: a pod limit or request that
 * grows is written before the containers, one that shrinks after them.
 *
 * @module
 */

import type { Container, Pod, ResourceRequirements } from "../types.ts";
import { isSidecar } from "../types.ts";
import {
  type ResizeFigures,
  resizeFigures,
  sameFigures,
} from "./allocation.ts";

/** One container to update in place for one resource. */
export interface ContainerUpdate {
  container: Container;
  containerId: string;
  desired: ResizeFigures;
  current: ResizeFigures;
}

/** What a sync must do to bring running containers to their allocation. */
export interface ResizePlan {
  /** Running containers to restart because a changed resource requires it. */
  restart: { name: string; containerId: string; message: string }[];
  /**
   * In-place updates per resource, decreases first then increases (upstream prepends
   * decreases so the room they free is there for the increases).
   */
  update: { memory: ContainerUpdate[]; cpu: ContainerUpdate[] };
  /** Whether the pod cgroup must be brought to the allocation too. */
  podResources: boolean;
}

/** The running container the plan may act on. */
export interface RunningContainer {
  name: string;
  id: string;
}

function policyOf(
  c: Container,
  resource: string,
): "NotRequired" | "RestartContainer" {
  return c.resizePolicy?.find((p) => p.resourceName === resource)
    ?.restartPolicy ?? "NotRequired";
}

/**
 * Plans the resize of `pod` (already the allocated pod) given its running containers and
 * what was last applied to each. A container without an applied record is taken as applied
 * as allocated (it was started before records were kept).
 */
export function planResize(
  pod: Pod,
  running: readonly RunningContainer[],
  actuated: (name: string) => ResourceRequirements | undefined,
): ResizePlan {
  const plan: ResizePlan = {
    restart: [],
    update: { memory: [], cpu: [] },
    podResources: false,
  };
  const resizable = [
    ...pod.spec.containers,
    ...(pod.spec.initContainers ?? []).filter((c) => isSidecar(c)),
  ];
  for (const c of resizable) {
    const view = running.find((r) => r.name === c.name);
    if (!view) continue;
    const desired = resizeFigures(c.resources);
    const applied = actuated(c.name);
    if (!applied) continue;
    const current = resizeFigures(applied);
    if (sameFigures(desired, current)) continue;
    const memChanged = desired.memoryLimit !== current.memoryLimit ||
      desired.memoryRequest !== current.memoryRequest;
    const cpuChanged = desired.cpuLimitMilli !== current.cpuLimitMilli ||
      desired.cpuRequestMilli !== current.cpuRequestMilli;
    const restart =
      (memChanged && policyOf(c, "memory") === "RestartContainer") ||
      (cpuChanged && policyOf(c, "cpu") === "RestartContainer");
    if (restart) {
      plan.restart.push({
        name: c.name,
        containerId: view.id,
        message: `Container ${c.name} resize requires restart`,
      });
      plan.podResources = true;
      continue;
    }
    const entry = { container: c, containerId: view.id, desired, current };
    const place = (
      list: ContainerUpdate[],
      want: number,
      have: number,
    ) => {
      if (want > have) list.push(entry);
      else if (want < have) list.unshift(entry);
    };
    if (desired.memoryLimit !== current.memoryLimit) {
      place(plan.update.memory, desired.memoryLimit, current.memoryLimit);
    } else if (desired.memoryRequest !== current.memoryRequest) {
      place(plan.update.memory, desired.memoryRequest, current.memoryRequest);
    }
    if (desired.cpuLimitMilli !== current.cpuLimitMilli) {
      place(plan.update.cpu, desired.cpuLimitMilli, current.cpuLimitMilli);
    } else if (desired.cpuRequestMilli !== current.cpuRequestMilli) {
      place(plan.update.cpu, desired.cpuRequestMilli, current.cpuRequestMilli);
    }
  }
  return plan;
}

/** Whether the plan does anything. */
export function planIsEmpty(plan: ResizePlan): boolean {
  return plan.restart.length === 0 && plan.update.memory.length === 0 &&
    plan.update.cpu.length === 0 && !plan.podResources;
}

/** The pod cgroup figures a resize compares: limits (quota, memory) and cpu shares. */
export interface PodCgroupFigures {
  cpuQuota: number;
  cpuShares: number;
  memoryLimit: number;
}

/** One step of applying the plan, in order. */
export type ResizeStep =
  | { kind: "podCgroup"; resource: "cpu"; set: "limit" | "request" }
  | { kind: "podCgroup"; resource: "memory"; set: "limit" }
  | { kind: "containers"; resource: "cpu" | "memory" };

/**
 * Upstream `doPodResizeAction`'s order: memory first, then cpu; for each a growing pod
 * limit/request before the containers, a shrinking one after them. A missing limit (-1 or
 * 0 unlimited) counts as the largest.
 */
export function resizeSteps(
  plan: ResizePlan,
  current: PodCgroupFigures,
  desired: PodCgroupFigures,
): ResizeStep[] {
  const steps: ResizeStep[] = [];
  const big = (n: number) => n <= 0 ? Number.MAX_SAFE_INTEGER : n;
  if (plan.update.memory.length || plan.podResources) {
    const have = big(current.memoryLimit);
    const want = big(desired.memoryLimit);
    if (want > have) {
      steps.push({ kind: "podCgroup", resource: "memory", set: "limit" });
    }
    if (plan.update.memory.length) {
      steps.push({ kind: "containers", resource: "memory" });
    }
    if (want < have) {
      steps.push({ kind: "podCgroup", resource: "memory", set: "limit" });
    }
  }
  if (plan.update.cpu.length || plan.podResources) {
    const have = big(current.cpuQuota);
    const want = big(desired.cpuQuota);
    if (want > have) {
      steps.push({ kind: "podCgroup", resource: "cpu", set: "limit" });
    }
    if (desired.cpuShares > current.cpuShares) {
      steps.push({ kind: "podCgroup", resource: "cpu", set: "request" });
    }
    if (plan.update.cpu.length) {
      steps.push({ kind: "containers", resource: "cpu" });
    }
    if (desired.cpuShares < current.cpuShares) {
      steps.push({ kind: "podCgroup", resource: "cpu", set: "request" });
    }
    if (want < have) {
      steps.push({ kind: "podCgroup", resource: "cpu", set: "limit" });
    }
  }
  return steps;
}

/**
 * Upstream `validateMemoryResizeAction`: memory limits that shrink (or appear) must stay
 * above the current usage of the pod and of each such container; returns the refusal.
 */
export function memoryDecreaseRefusal(
  plan: ResizePlan,
  current: PodCgroupFigures,
  desired: PodCgroupFigures,
  usage: { pod?: number; containers: ReadonlyMap<string, number> },
): string | undefined {
  if (!plan.update.memory.length && !plan.podResources) return undefined;
  const podDecreasing = desired.memoryLimit > 0 &&
    (current.memoryLimit <= 0 || desired.memoryLimit < current.memoryLimit);
  const decreasing = new Map<string, number>();
  for (const u of plan.update.memory) {
    const want = u.desired.memoryLimit;
    if (
      want !== 0 &&
      (u.current.memoryLimit === 0 || want < u.current.memoryLimit)
    ) {
      decreasing.set(u.container.name, want);
    }
  }
  if (!podDecreasing && decreasing.size === 0) return undefined;
  const errors: string[] = [];
  if (podDecreasing) {
    if (usage.pod === undefined) errors.push("missing pod memory usage");
    else if (usage.pod >= desired.memoryLimit) {
      errors.push(
        `attempting to set pod memory limit (${desired.memoryLimit}) below current usage (${usage.pod})`,
      );
    }
  }
  for (const [name, limit] of decreasing) {
    const used = usage.containers.get(name);
    if (used === undefined) {
      errors.push(`missing container "${name}" memory usage`);
    } else if (used >= limit) {
      errors.push(
        `attempting to set container "${name}" memory limit (${limit}) below current usage (${
          usage.pod ?? used
        })`,
      );
    }
  }
  if (!errors.length) return undefined;
  return `cannot decrease memory limits: ${
    errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`
  }`;
}
