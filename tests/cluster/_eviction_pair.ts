/**
 * The node-pressure eviction scenario both eviction differentials run on each node: pods that
 * hold a resource become Ready, a static "ballast" pod (critical, never evicted) takes the node
 * past its threshold, and every other pod is evicted while the pressure lasts; then a late pod
 * bound to the node is refused. What one side shows is returned for comparison.
 */
import type { KubeletKind, Node } from "../conformance/node.ts";
import { getJson, kubectl, waitFor } from "./_cluster.ts";
import { applyObject } from "./_node_pair.ts";

/** The fields of a pod the scenario reads. */
export interface PodJson {
  metadata: { name: string };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
  };
}

/** Quantities vary with the measurement: `123Ki`, `4Mi`, `93112`. */
export function maskQuantities(text: string): string {
  return text.replace(/\b\d+(\.\d+)?(Ki|Mi|Gi|k|M)?\b/g, "<q>");
}

/** One side's run of the scenario. */
export interface EvictionRun {
  kind: KubeletKind;
  node: Node;
  /** The node's root: the ballast goes into its `manifests`. */
  root: string;
  namespace: string;
  /** The label key whose value `holder` marks the scenario's pods (`late` the late one). */
  label: string;
  holders: Record<string, unknown>[];
  /** The static pod's manifest (JSON). */
  ballast: string;
  condition: "MemoryPressure" | "DiskPressure";
  taint: string;
  /** A pod bound to the node after the evictions, which the node must refuse. */
  late: Record<string, unknown> & { metadata: { name: string } };
  /** Runs once every holder is Ready, before the ballast. */
  beforeBallast?: () => Promise<void>;
}

/** What one side showed. */
export interface EvictionOutcome {
  order: string[];
  evicted: Record<string, unknown>;
  pressure: { condition?: unknown; taint?: boolean };
  refused: unknown;
  /** The evicted pods' messages unmasked (reported only: the figures are measurements). */
  messages: Record<string, string>;
  /** From the ballast's manifest to the first eviction seen, seconds (reported only). */
  firstEvictionSeconds: number | undefined;
}

interface NodeJson {
  spec?: { taints?: { key: string; effect: string }[] };
  status?: {
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
    }[];
  };
}

async function holdersOf(run: EvictionRun): Promise<PodJson[]> {
  const list = await getJson<{ items: PodJson[] }>(
    "pods",
    "-n",
    run.namespace,
    "-l",
    `${run.label}=holder`,
  );
  return list?.items ?? [];
}

async function allReady(run: EvictionRun): Promise<void> {
  const { kind, namespace } = run;
  let early: string | undefined;
  await waitFor(`${kind}: every holder Ready`, async () => {
    const items = await holdersOf(run);
    // evicted before the ballast: the node was under pressure from the start
    const failed = items.find((p) => p.status?.phase === "Failed");
    if (failed) {
      early =
        `${kind}: ${failed.metadata.name} failed before the ballast: ${failed.status?.message}`;
      return true;
    }
    const ready = items.filter((p) =>
      p.status?.conditions?.some((c) =>
        c.type === "Ready" && c.status === "True"
      )
    );
    return ready.length === run.holders.length ? true : undefined;
  }, 300_000).catch(async (e) => {
    // what each pod showed, for the reader of the failure
    const list = await getJson<{ items: PodJson[] }>("pods", "-n", namespace);
    // deno-lint-ignore no-console
    console.warn(JSON.stringify(list?.items.map((p) => p.status), null, 1));
    throw e;
  });
  if (early) throw new Error(early);
}

/** Runs the scenario on one node and returns what it showed. */
export async function runEvictionScenario(
  run: EvictionRun,
): Promise<EvictionOutcome> {
  const { kind, namespace } = run;
  const name = run.node.name;
  await kubectl("create", "namespace", namespace).catch(() => {});
  for (const pod of run.holders) await applyObject(pod);
  await allReady(run);
  await run.beforeBallast?.();
  const start = Date.now();
  await Deno.writeTextFile(`${run.root}/manifests/ballast.json`, run.ballast);
  const order: string[] = [];
  const evicted: Record<string, unknown> = {};
  const messages: Record<string, string> = {};
  let pressure: EvictionOutcome["pressure"] = {};
  let firstEvictionSeconds: number | undefined;
  await waitFor(`${kind}: all ${run.holders.length} evicted`, async () => {
    const failed = (await holdersOf(run)).filter((p) =>
      p.status?.phase === "Failed" && !order.includes(p.metadata.name)
    );
    if (failed.length > 0 && firstEvictionSeconds === undefined) {
      firstEvictionSeconds = Math.round((Date.now() - start) / 1000);
    }
    // several seen in one poll: the DisruptionTarget times order them (seconds)
    const since = (p: PodJson) =>
      p.status?.conditions?.find((c) => c.type === "DisruptionTarget")
        ?.lastTransitionTime ?? "";
    failed.sort((a, b) =>
      since(a) < since(b) ? -1 : since(a) > since(b) ? 1 : 0
    );
    for (const p of failed) {
      order.push(p.metadata.name);
      messages[p.metadata.name] = p.status?.message ?? "";
      const dt = p.status?.conditions?.find((c) =>
        c.type === "DisruptionTarget"
      );
      evicted[p.metadata.name] = {
        phase: p.status?.phase,
        reason: p.status?.reason,
        message: maskQuantities(p.status?.message ?? ""),
        disruptionTarget: dt && {
          status: dt.status,
          reason: dt.reason,
          message: maskQuantities(dt.message ?? ""),
        },
      };
    }
    if (pressure.condition === undefined) {
      const n = await getJson<NodeJson>("node", name);
      const c = n?.status?.conditions?.find((c) => c.type === run.condition);
      if (c?.status === "True") {
        pressure = {
          condition: { status: c.status, reason: c.reason, message: c.message },
          taint: n?.spec?.taints?.some((t) =>
            t.key === run.taint && t.effect === "NoSchedule"
          ) ?? false,
        };
      }
    }
    return order.length === run.holders.length ? true : undefined;
  }, 900_000);
  // under pressure (the ballast stays) the late pod bound to the node is refused
  const late = structuredClone(run.late);
  (late.metadata as Record<string, unknown>).labels = { [run.label]: "late" };
  await applyObject(late);
  const refused = await waitFor(`${kind}: the late pod refused`, async () => {
    const p = await getJson<PodJson>(
      "pod",
      "-n",
      namespace,
      late.metadata.name,
    );
    return p?.status?.phase === "Failed"
      ? {
        phase: p.status.phase,
        reason: p.status.reason,
        message: p.status.message,
      }
      : undefined;
  }, 120_000);
  if (!pressure.taint) {
    const n = await getJson<NodeJson>("node", name);
    pressure.taint = n?.spec?.taints?.some((t) => t.key === run.taint) ??
      false;
  }
  return { order, evicted, pressure, refused, messages, firstEvictionSeconds };
}
