/**
 * `GET /metrics/resource`: the figures metrics-server and `kubectl top` read, under upstream's
 * names (pkg/kubelet/metrics/collectors/resource_metrics.go): per container and per pod CPU
 * time and memory working set, container start times, the node's CPU time and memory working
 * set (root cgroup), and `resource_scrape_error` (`scrape_error` is deprecated since 1.29, so
 * hidden in 1.34). Samples carry the time they
 * were measured.
 *
 * @module
 */

import type { Route } from "./healthz.ts";
import { escapeLabel } from "./metrics.ts";

/** One running container's figures from CRI `ListContainerStats`. */
export interface ContainerResourceStats {
  namespace: string;
  pod: string;
  container: string;
  /** When the runtime measured them (ms since the epoch). */
  timeMs: number;
  cpuCoreNanoSeconds?: number;
  memoryWorkingSetBytes?: number;
  /** Container start (s since the epoch). */
  startTimeSeconds?: number;
  swapUsageBytes?: number;
  swapAvailableBytes?: number;
}

/** What `/metrics/resource` shows. */
export interface ResourceStats {
  node?: {
    timeMs: number;
    cpuCoreNanoSeconds?: number;
    memoryWorkingSetBytes?: number;
    swapUsageBytes?: number;
  };
  containers: ContainerResourceStats[];
}

/** What `/metrics/resource` reads. */
export interface ResourceMetricsHost {
  resourceStats(): Promise<ResourceStats>;
}

type Sample = [labels: string, value: number, timeMs?: number];

function family(
  name: string,
  type: "gauge" | "counter",
  help: string,
  samples: Sample[],
): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, value, timeMs] of samples) {
    const time = timeMs === undefined ? "" : ` ${Math.round(timeMs)}`;
    lines.push(`${name}${labels} ${value}${time}`);
  }
  return `${lines.join("\n")}\n`;
}

function labels(pairs: Array<[string, string]>): string {
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`;
}

/** The exposition text of the figures (`scrapeError` when they could not be read). */
export function resourceMetricsText(
  stats: ResourceStats,
  options: { scrapeError: boolean },
): string {
  const containerLabels = (c: ContainerResourceStats) =>
    labels([["container", c.container], ["namespace", c.namespace], [
      "pod",
      c.pod,
    ]]);
  const pods = new Map<
    string,
    {
      namespace: string;
      pod: string;
      cpu?: number;
      memory?: number;
      swap?: number;
      timeMs: number;
    }
  >();
  for (const c of stats.containers) {
    const key = `${c.namespace}/${c.pod}`;
    const pod = pods.get(key) ??
      { namespace: c.namespace, pod: c.pod, timeMs: 0 };
    if (c.cpuCoreNanoSeconds !== undefined) {
      pod.cpu = (pod.cpu ?? 0) + c.cpuCoreNanoSeconds;
    }
    if (c.memoryWorkingSetBytes !== undefined) {
      pod.memory = (pod.memory ?? 0) + c.memoryWorkingSetBytes;
    }
    if (c.swapUsageBytes !== undefined) {
      pod.swap = (pod.swap ?? 0) + c.swapUsageBytes;
    }
    pod.timeMs = Math.max(pod.timeMs, c.timeMs);
    pods.set(key, pod);
  }
  const podLabels = (p: { namespace: string; pod: string }) =>
    labels([["namespace", p.namespace], ["pod", p.pod]]);
  const text: string[] = [
    family(
      "container_cpu_usage_seconds_total",
      "counter",
      "[STABLE] Cumulative cpu time consumed by the container in core-seconds",
      stats.containers.filter((c) => c.cpuCoreNanoSeconds !== undefined).map((
        c,
      ) => [containerLabels(c), c.cpuCoreNanoSeconds! / 1e9, c.timeMs]),
    ),
    family(
      "container_memory_working_set_bytes",
      "gauge",
      "[STABLE] Current working set of the container in bytes",
      stats.containers.filter((c) => c.memoryWorkingSetBytes !== undefined)
        .map((c) => [containerLabels(c), c.memoryWorkingSetBytes!, c.timeMs]),
    ),
    family(
      "container_start_time_seconds",
      "gauge",
      "[STABLE] Start time of the container since unix epoch in seconds",
      stats.containers.filter((c) => c.startTimeSeconds !== undefined).map((
        c,
      ) => [containerLabels(c), c.startTimeSeconds!, c.timeMs]),
    ),
    family(
      "container_swap_usage_bytes",
      "gauge",
      "[ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems",
      stats.containers.filter((c) => c.swapUsageBytes !== undefined).map((
        c,
      ) => [containerLabels(c), c.swapUsageBytes!, c.timeMs]),
    ),
    // upstream: the limit is what is still available plus what is used
    family(
      "container_swap_limit_bytes",
      "gauge",
      "[ALPHA] Current amount of the container swap limit in bytes. Reported only on non-windows systems",
      stats.containers.filter((c) => c.swapAvailableBytes !== undefined).map((
        c,
      ) => [
        containerLabels(c),
        c.swapAvailableBytes! + (c.swapUsageBytes ?? 0),
        c.timeMs,
      ]),
    ),
  ];
  const node = stats.node;
  if (node?.cpuCoreNanoSeconds !== undefined) {
    text.push(family(
      "node_cpu_usage_seconds_total",
      "counter",
      "[STABLE] Cumulative cpu time consumed by the node in core-seconds",
      [["", node.cpuCoreNanoSeconds / 1e9, node.timeMs]],
    ));
  }
  if (node?.memoryWorkingSetBytes !== undefined) {
    text.push(family(
      "node_memory_working_set_bytes",
      "gauge",
      "[STABLE] Current working set of the node in bytes",
      [["", node.memoryWorkingSetBytes, node.timeMs]],
    ));
  }
  if (node?.swapUsageBytes !== undefined) {
    text.push(family(
      "node_swap_usage_bytes",
      "gauge",
      "[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems",
      [["", node.swapUsageBytes, node.timeMs]],
    ));
  }
  text.push(
    family(
      "pod_cpu_usage_seconds_total",
      "counter",
      "[STABLE] Cumulative cpu time consumed by the pod in core-seconds",
      [...pods.values()].filter((p) => p.cpu !== undefined).map((
        p,
      ) => [podLabels(p), p.cpu! / 1e9, p.timeMs]),
    ),
    family(
      "pod_memory_working_set_bytes",
      "gauge",
      "[STABLE] Current working set of the pod in bytes",
      [...pods.values()].filter((p) => p.memory !== undefined).map((
        p,
      ) => [podLabels(p), p.memory!, p.timeMs]),
    ),
    family(
      "pod_swap_usage_bytes",
      "gauge",
      "[ALPHA] Current amount of the pod swap usage in bytes. Reported only on non-windows systems",
      [...pods.values()].filter((p) => p.swap !== undefined).map((
        p,
      ) => [podLabels(p), p.swap!, p.timeMs]),
    ),
    family(
      "resource_scrape_error",
      "gauge",
      "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise",
      [["", options.scrapeError ? 1 : 0]],
    ),
  );
  return text.join("");
}

/** `GET /metrics/resource`. */
export function resourceMetricsRoute(host: ResourceMetricsHost): Route {
  return async () => {
    let stats: ResourceStats = { containers: [] };
    let scrapeError = false;
    try {
      stats = await host.resourceStats();
    } catch {
      scrapeError = true;
    }
    return new Response(resourceMetricsText(stats, { scrapeError }), {
      status: 200,
      headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
    });
  };
}
