/**
 * `GET /metrics` and `/metrics/probes` in the Prometheus text format (version 0.0.4), under
 * upstream's names: the figures read at scrape time (node name, running pods and containers by
 * state, the process collector's memory, CPU and start time), then the series recorded as the
 * kubelet works (`src/metrics/kubelet_metrics.ts`: pod start and worker durations, PLEG relist,
 * runtime operations, started pods and containers; the prober's for `/metrics/probes`).
 *
 @module
 */

import process from "node:process";
import type { Route } from "./healthz.ts";
import { escapeLabel } from "../../metrics/mod.ts";
import { kubeletRegistry, probeRegistry } from "../../metrics/mod.ts";

/** The runtime's pods and containers as the gauges count them. */
export interface RuntimeCounts {
  /** Pods with a ready sandbox (upstream `kubelet_running_pods`). */
  runningPods: number;
  /** Containers by CRI state: `created`, `running`, `exited`, `unknown`. */
  containers: Readonly<Record<string, number>>;
}

/** What `/metrics` reads. */
export interface MetricsHost {
  nodeName: string;
  runtimeCounts(): Promise<RuntimeCounts>;
  /** The process figures (default: Deno's). */
  process?: () => ProcessFigures;
}

/** The process collector's figures. */
export interface ProcessFigures {
  residentMemoryBytes: number;
  cpuSeconds: number;
  startTimeSeconds: number;
}

const STARTED_MS = Date.now() - performance.now();

function denoProcess(): ProcessFigures {
  const usage = process.cpuUsage();
  return {
    residentMemoryBytes: Deno.memoryUsage().rss,
    cpuSeconds: (usage.user + usage.system) / 1e6,
    startTimeSeconds: STARTED_MS / 1000,
  };
}

export { escapeLabel };

function family(
  name: string,
  type: "gauge" | "counter",
  help: string,
  samples: Array<[string, number]>,
): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, value] of samples) {
    lines.push(`${name}${labels} ${value}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The exposition text of the figures. */
export function metricsText(
  figures: {
    nodeName: string;
    counts: RuntimeCounts;
    process: ProcessFigures;
  },
): string {
  const { nodeName, counts, process } = figures;
  const states = ["created", "exited", "running", "unknown"];
  return [
    family(
      "kubelet_node_name",
      "gauge",
      "[ALPHA] The node's name; the value is always 1.",
      [[`{node="${escapeLabel(nodeName)}"}`, 1]],
    ),
    family(
      "kubelet_running_containers",
      "gauge",
      "[ALPHA] Number of containers currently running",
      states.map((
        s,
      ) => [`{container_state="${s}"}`, counts.containers[s] ?? 0]),
    ),
    family(
      "kubelet_running_pods",
      "gauge",
      "[ALPHA] Number of pods that have a running pod sandbox",
      [["", counts.runningPods]],
    ),
    family(
      "process_cpu_seconds_total",
      "counter",
      "Total user and system CPU time spent in seconds.",
      [["", process.cpuSeconds]],
    ),
    family(
      "process_resident_memory_bytes",
      "gauge",
      "Resident memory size in bytes.",
      [["", process.residentMemoryBytes]],
    ),
    family(
      "process_start_time_seconds",
      "gauge",
      "Start time of the process since unix epoch in seconds.",
      [["", process.startTimeSeconds]],
    ),
  ].join("");
}

function textFormat(text: string): Response {
  return new Response(text, {
    status: 200,
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
  });
}

/** `GET /metrics`: the scrape-time gauges, then the recorded series. */
export function metricsRoute(host: MetricsHost): Route {
  return async () => {
    const counts = await host.runtimeCounts();
    const text = metricsText({
      nodeName: host.nodeName,
      counts,
      process: (host.process ?? denoProcess)(),
    });
    return textFormat(text + kubeletRegistry.text());
  };
}

/** `GET /metrics/probes`: the prober's counters and durations. */
export function probeMetricsRoute(): Route {
  return () => Promise.resolve(textFormat(probeRegistry.text()));
}
