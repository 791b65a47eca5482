/**
 * `GET /stats/summary` (upstream `handleSummary`): the node's and its pods' figures as a
 * `statsapi.Summary` JSON document; `?only_cpu_and_memory=true` keeps CPU and memory only.
 *
 * @module
 */

import { cpuAndMemoryOnly } from "../stats/summary.ts";
import type { Route } from "./healthz.ts";
import { jsonResponse } from "./pods.ts";

/** What the route reads from the kubelet. */
export interface StatsSummaryHost {
  /** The whole summary (see `stats/summary.ts` `buildSummary`). */
  statsSummary(): Promise<Record<string, unknown>>;
}

/** The `/stats/summary` route. */
export function statsSummaryRoute(host: StatsSummaryHost): Route {
  return async (_request, url) => {
    const summary = await host.statsSummary();
    const only = url.searchParams.getAll("only_cpu_and_memory");
    return jsonResponse(
      200,
      only.length === 1 && only[0] === "true"
        ? cpuAndMemoryOnly(summary)
        : summary,
    );
  };
}
