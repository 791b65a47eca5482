/**
 * `GET /metrics/cadvisor`: the `container_*` families upstream's kubelet serves from its
 * embedded cAdvisor, for the figures CRI stats and the root cgroup give: CPU time, memory
 * working set, usage, RSS and page faults, start time and last seen, with the labels the
 * kubelet keeps (`container`, `id` = cgroup path, `image`, `name` = runtime id, `namespace`,
 * `pod`). The node is the root container `id="/"`, as cAdvisor names it. The families cAdvisor
 * reads from other cgroup and /proc files are listed in docs/differences.md.
 *
 * @module
 */

import type { Route } from "./healthz.ts";
import { escapeLabel } from "./metrics.ts";

/** One cgroup's figures: a running container, or the node as the root container. */
export interface CadvisorContainer {
  /** The cgroup path (`/` for the node). */
  id: string;
  /** The runtime's container id ("" for the node). */
  name: string;
  image: string;
  namespace: string;
  pod: string;
  container: string;
  /** When they were measured (ms since the epoch). */
  timeMs: number;
  cpuCoreNanoSeconds?: number;
  memoryWorkingSetBytes?: number;
  memoryUsageBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
  /** Start (s since the epoch). */
  startTimeSeconds?: number;
}

/** What `/metrics/cadvisor` reads. */
export interface CadvisorMetricsHost {
  cadvisorStats(): Promise<CadvisorContainer[]>;
}

type Family = {
  name: string;
  type: "gauge" | "counter";
  help: string;
  /** Extra labels and the value per cgroup; undefined → no sample. */
  samples: (c: CadvisorContainer) => [Record<string, string>, number][];
  /** Timestamped with the measurement (cAdvisor leaves start time and last seen bare). */
  stamped: boolean;
};

const one = (v: number | undefined): [Record<string, string>, number][] =>
  v === undefined ? [] : [[{}, v]];

/** cAdvisor's families in its names, types and help texts, sorted by name. */
const FAMILIES: Family[] = [
  {
    name: "container_cpu_usage_seconds_total",
    type: "counter",
    help: "Cumulative cpu time consumed in seconds.",
    samples: (c) =>
      c.cpuCoreNanoSeconds === undefined
        ? []
        : [[{ cpu: "total" }, c.cpuCoreNanoSeconds / 1e9]],
    stamped: true,
  },
  {
    name: "container_last_seen",
    type: "gauge",
    help: "Last time a container was seen by the exporter",
    samples: (c) => [[{}, Math.floor(c.timeMs / 1000)]],
    stamped: true,
  },
  {
    name: "container_memory_failures_total",
    type: "counter",
    help: "Cumulative count of memory allocation failures.",
    samples: (c) =>
      [["pgfault", c.pageFaults], ["pgmajfault", c.majorPageFaults]].flatMap((
        [type, v],
      ) =>
        v === undefined
          ? []
          : ["container", "hierarchy"].map((scope) =>
            [{ failure_type: String(type), scope }, Number(v)] as [
              Record<string, string>,
              number,
            ]
          )
      ),
    stamped: true,
  },
  {
    name: "container_memory_rss",
    type: "gauge",
    help: "Size of RSS in bytes.",
    samples: (c) => one(c.rssBytes),
    stamped: true,
  },
  {
    name: "container_memory_usage_bytes",
    type: "gauge",
    help:
      "Current memory usage in bytes, including all memory regardless of when it was accessed",
    samples: (c) => one(c.memoryUsageBytes),
    stamped: true,
  },
  {
    name: "container_memory_working_set_bytes",
    type: "gauge",
    help: "Current working set in bytes.",
    samples: (c) => one(c.memoryWorkingSetBytes),
    stamped: true,
  },
  {
    name: "container_start_time_seconds",
    type: "gauge",
    help: "Start time of the container since unix epoch in seconds.",
    samples: (c) => one(c.startTimeSeconds),
    stamped: true,
  },
];

function labelText(c: CadvisorContainer, extra: Record<string, string>) {
  const pairs: Record<string, string> = {
    container: c.container,
    id: c.id,
    image: c.image,
    name: c.name,
    namespace: c.namespace,
    pod: c.pod,
    ...extra,
  };
  const keys = Object.keys(pairs).sort();
  return `{${keys.map((k) => `${k}="${escapeLabel(pairs[k]!)}"`).join(",")}}`;
}

/** The exposition text of the cgroups' figures. */
export function cadvisorMetricsText(
  containers: readonly CadvisorContainer[],
): string {
  const out: string[] = [];
  for (const f of FAMILIES) {
    const lines: string[] = [];
    for (const c of containers) {
      for (const [extra, value] of f.samples(c)) {
        const time = f.stamped ? ` ${Math.round(c.timeMs)}` : "";
        lines.push(`${f.name}${labelText(c, extra)} ${value}${time}`);
      }
    }
    if (lines.length === 0) continue;
    out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    out.push(...lines);
  }
  return out.length ? `${out.join("\n")}\n` : "";
}

/** `GET /metrics/cadvisor`; a failed read is a 500, as upstream's collector error. */
export function cadvisorMetricsRoute(host: CadvisorMetricsHost): Route {
  return async () => {
    const text = cadvisorMetricsText(await host.cadvisorStats());
    return new Response(text, {
      status: 200,
      headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
    });
  };
}
