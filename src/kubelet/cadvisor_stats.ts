/**
 * Gathers what `/metrics/cadvisor` shows: each running container's CRI stats
 * (`ListContainerStats`), its image, start time and cgroup path (verbose CRI
 * `ContainerStatus`, whose runtime spec names the cgroup), and the node as cAdvisor's root
 * container from the root cgroup ({@linkcode readNodeUsage}).
 *
 * @module
 */

import type { RuntimeService } from "../runtime/mod.ts";
import type { CadvisorContainer } from "../server/mod.ts";
import {
  CONTAINER_NAME_LABEL,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
} from "../pod/mod.ts";
import { type NodeUsageSource, readNodeUsage } from "./node_usage.ts";

/** What the gathering reads. */
export interface CadvisorStatsDeps {
  runtime: Pick<RuntimeService, "listContainerStats" | "containerStatus">;
  /** The node's usage; omitted → no root container. */
  node?: NodeUsageSource;
}

/** The cgroup path of a verbose `ContainerStatus` answer's runtime spec; "" when absent. */
export function cgroupPathOf(info: Record<string, string> | undefined): string {
  try {
    const parsed = JSON.parse(info?.info ?? "{}") as {
      runtimeSpec?: { linux?: { cgroupsPath?: unknown } };
    };
    const path = parsed.runtimeSpec?.linux?.cgroupsPath;
    return typeof path === "string" ? path : "";
  } catch {
    return "";
  }
}

const num = (v: { value: bigint } | undefined) =>
  v === undefined ? undefined : Number(v.value);

/** Every running container's figures, then the node's as the root container `/`. */
export async function cadvisorStats(
  deps: CadvisorStatsDeps,
): Promise<CadvisorContainer[]> {
  const { stats } = await deps.runtime.listContainerStats({});
  const out = await Promise.all(stats.map(async (s) => {
    const id = s.attributes?.id ?? "";
    const labels = s.attributes?.labels ?? {};
    const verbose = await deps.runtime.containerStatus({
      containerId: id,
      verbose: true,
    }).catch(() => undefined);
    const status = verbose?.status;
    const c: CadvisorContainer = {
      id: cgroupPathOf(verbose?.info),
      name: id,
      image: status?.image?.image ?? "",
      namespace: labels[POD_NAMESPACE_LABEL] ?? "",
      pod: labels[POD_NAME_LABEL] ?? "",
      container: labels[CONTAINER_NAME_LABEL] ?? "",
      timeMs: Number(
        (s.cpu?.timestamp ?? s.memory?.timestamp ?? 0n) / 1_000_000n,
      ),
    };
    const set = <K extends keyof CadvisorContainer>(
      key: K,
      value: CadvisorContainer[K] | undefined,
    ) => {
      if (value !== undefined) c[key] = value;
    };
    set("cpuCoreNanoSeconds", num(s.cpu?.usageCoreNanoSeconds));
    set("memoryWorkingSetBytes", num(s.memory?.workingSetBytes));
    set("memoryUsageBytes", num(s.memory?.usageBytes));
    set("rssBytes", num(s.memory?.rssBytes));
    set("pageFaults", num(s.memory?.pageFaults));
    set("majorPageFaults", num(s.memory?.majorPageFaults));
    if (status?.startedAt) {
      set("startTimeSeconds", Number(status.startedAt / 1_000_000n) / 1000);
    }
    return c;
  }));
  if (deps.node) {
    const u = await readNodeUsage(deps.node);
    const root: CadvisorContainer = {
      id: "/",
      name: "",
      image: "",
      namespace: "",
      pod: "",
      container: "",
      timeMs: u.timeMs,
    };
    if (u.cpuCoreNanoSeconds !== undefined) {
      root.cpuCoreNanoSeconds = u.cpuCoreNanoSeconds;
    }
    if (u.memoryUsageBytes !== undefined) {
      root.memoryUsageBytes = u.memoryUsageBytes;
    }
    if (u.memoryWorkingSetBytes !== undefined) {
      root.memoryWorkingSetBytes = u.memoryWorkingSetBytes;
    }
    out.push(root);
  }
  return out;
}
