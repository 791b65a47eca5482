/**
 * The thin executor of an in-place resize (upstream `doPodResizeAction` and
 * `updatePodContainerResources`): the memory refusal check, then the pod cgroup and CRI
 * `UpdateContainerResources` steps in the order `resizeSteps` gives, each applied container
 * recorded as actuated.
 *
 * @module
 */

import type { RuntimeService } from "../../runtime/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { Pod, ResourceRequirements, SyncResult } from "../types.ts";
import {
  containerLinuxResources,
  type NodeResources,
  podCgroupConfig,
} from "../cgroups/pod_resources.ts";
import type { CgroupSettings } from "../cgroups/cgroup_settings.ts";
import { podWithAllocation } from "../resize/allocation.ts";
import {
  type ContainerUpdate,
  memoryDecreaseRefusal,
  type PodCgroupFigures,
  type ResizePlan,
  resizeSteps,
} from "../resize/resize_plan.ts";
import { errorMessage } from "../../util/error_message.ts";
import type { PodActions } from "./pod_plan.ts";

/** What the executor acts through. */
export interface ResizeExecDeps {
  runtime: Pick<RuntimeService, "updateContainerResources" | "containerStats">;
  logger: Logger;
  /** Writes pod cgroup settings (absent: the runtime owns the pod cgroup). */
  resizePodCgroup?: (pod: Pod, settings: CgroupSettings) => Promise<void>;
  node: NodeResources;
  actuated(uid: string, name: string): ResourceRequirements | undefined;
  setActuated(
    uid: string,
    name: string,
    resources: ResourceRequirements,
  ): Promise<void>;
}

function figures(pod: Pod): PodCgroupFigures {
  const c = podCgroupConfig(pod);
  return {
    cpuQuota: c.cpuQuota ?? -1,
    cpuShares: c.cpuShares,
    memoryLimit: c.memoryLimit ?? -1,
  };
}

/** The requirements a container runs with after one resource of it was updated. */
function mixed(
  u: ContainerUpdate,
  resource: "cpu" | "memory",
): ResourceRequirements {
  const cpu = resource === "cpu" ? u.desired : u.current;
  const mem = resource === "memory" ? u.desired : u.current;
  const list = (milli: number, bytes: number) => {
    const out: Record<string, string> = {};
    if (milli) out["cpu"] = `${milli}m`;
    if (bytes) out["memory"] = String(bytes);
    return out;
  };
  const limits = list(cpu.cpuLimitMilli, mem.memoryLimit);
  const requests = list(cpu.cpuRequestMilli, mem.memoryRequest);
  return {
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(Object.keys(requests).length ? { requests } : {}),
  };
}

/**
 * Applies `plan` to the allocated `pod`; returns the failed step's result (reason
 * `ResizePodInPlaceError`), or undefined when every step succeeded.
 */
export async function executeResize(
  deps: ResizeExecDeps,
  pod: Pod,
  plan: ResizePlan,
  signal: AbortSignal,
): Promise<SyncResult | undefined> {
  const uid = pod.metadata.uid ?? "";
  // what the pod cgroup holds now: the pod as last actuated
  const applied = new Map<string, ResourceRequirements>();
  for (
    const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]
  ) {
    const a = deps.actuated(uid, c.name);
    if (a) applied.set(c.name, a);
  }
  const before = podWithAllocation(pod, applied).pod;
  const current = figures(before);
  const desired = figures(pod);
  const fail = (message: string): SyncResult => ({
    action: "ResizePodInPlace",
    target: pod.metadata.name ?? "",
    reason: "ResizePodInPlaceError",
    message,
  });
  try {
    const refusal = memoryDecreaseRefusal(
      plan,
      current,
      desired,
      await memoryUsage(deps, plan, signal),
    );
    if (refusal) return fail(refusal);
    const settings = podCgroupConfig(pod);
    for (const step of resizeSteps(plan, current, desired)) {
      if (step.kind === "podCgroup") {
        const part: CgroupSettings = step.resource === "memory"
          ? { memoryLimit: settings.memoryLimit ?? -1 }
          : step.set === "limit"
          ? {
            cpuQuota: settings.cpuQuota ?? -1,
            cpuPeriod: settings.cpuPeriod ?? 100_000,
          }
          : { cpuShares: settings.cpuShares };
        await deps.resizePodCgroup?.(pod, part);
        continue;
      }
      for (const u of plan.update[step.resource]) {
        const resources = mixed(u, step.resource);
        const container = { ...u.container, resources };
        await deps.runtime.updateContainerResources({
          containerId: u.containerId,
          linux: containerLinuxResources(pod, container, deps.node),
        }, { signal });
        u.current = step.resource === "memory"
          ? {
            ...u.current,
            memoryLimit: u.desired.memoryLimit,
            memoryRequest: u.desired.memoryRequest,
          }
          : {
            ...u.current,
            cpuLimitMilli: u.desired.cpuLimitMilli,
            cpuRequestMilli: u.desired.cpuRequestMilli,
          };
        await deps.setActuated(uid, u.container.name, resources);
      }
    }
  } catch (error) {
    deps.logger.error("Failed to resize pod in place", {
      pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
      err: errorMessage(error),
    });
    return fail(errorMessage(error));
  }
  return undefined;
}

/** Memory usage of the containers whose limit shrinks, and of the pod (their sum). */
async function memoryUsage(
  deps: ResizeExecDeps,
  plan: ResizePlan,
  signal: AbortSignal,
): Promise<{ pod?: number; containers: Map<string, number> }> {
  const containers = new Map<string, number>();
  if (!plan.update.memory.length && !plan.podResources) return { containers };
  let pod = 0;
  for (const u of plan.update.memory) {
    const stats = await deps.runtime.containerStats({
      containerId: u.containerId,
    }, { signal });
    const used = stats.stats?.memory?.usageBytes?.value;
    if (used !== undefined) {
      containers.set(u.container.name, Number(used));
      pod += Number(used);
    }
  }
  return { pod, containers };
}

/**
 * Upstream `computePodResizeAction`'s restart branch: each container the plan restarts is
 * killed and started again (a sidecar among the init containers), unless the sync already
 * does so. Pure: changes `actions` only.
 */
export function addResizeRestarts(
  actions: PodActions,
  pod: Pod,
  plan: ResizePlan,
): void {
  for (const r of plan.restart) {
    if (actions.containersToKill.has(r.containerId)) continue;
    const regular = pod.spec.containers.findIndex((c) => c.name === r.name);
    const init = (pod.spec.initContainers ?? []).findIndex((c) =>
      c.name === r.name
    );
    const container = regular >= 0
      ? pod.spec.containers[regular]!
      : pod.spec.initContainers![init]!;
    actions.containersToKill.set(r.containerId, {
      containerId: r.containerId,
      name: r.name,
      container,
      message: r.message,
      reason: "",
    });
    if (regular >= 0) {
      if (!actions.containersToStart.includes(regular)) {
        actions.containersToStart.push(regular);
        actions.containersToStart.sort((a, b) => a - b);
      }
    } else if (!actions.initContainersToStart.includes(init)) {
      actions.initContainersToStart.push(init);
    }
  }
}
