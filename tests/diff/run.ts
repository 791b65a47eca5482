/**
 * Runs a scenario under both kubelets at once and compares what each sent its runtime.
 */
import { cluster, clusterMissing } from "../cluster/_cluster.ts";
import { jsonDiff, lifecycle, type PodTrace, podTraces } from "./normalize.ts";
import { maskApi } from "./normalize_api.ts";
import type { Scenario, ScenarioContext } from "./scenarios.ts";
import { type ApiSide, startApiSide } from "./_api.ts";
import { type Kind, type Side, startPair } from "./_sides.ts";

export const NODE = "diff-node";

/** Why the API-mode scenarios cannot run here (no control plane), or undefined. */
export const apiMissing = clusterMissing;

/** Where the two sides' containerds put their pods; apart from every other test's. */
const NETWORKS = {
  ours: { bridge: "ktsd0", subnet: "10.86.0.0/16" },
  upstream: { bridge: "ktsd1", subnet: "10.87.0.0/16" },
};

export interface Difference {
  pod: string;
  /** `lifecycle`, `sandbox` or `container <name>`. */
  what: string;
  detail: string;
}

export interface ScenarioReport {
  scenario: string;
  lifecycles: Record<string, { ours: string[]; upstream: string[] }>;
  differences: Difference[];
}

/** `namespace/name` keys with the side's node name masked. */
function byMaskedKey<T>(side: Side, pods: Map<string, T>): Map<string, T> {
  return new Map(
    [...pods].map(([k, v]) => [k.split(side.node).join("<node>"), v]),
  );
}

async function sidePods(side: Side): Promise<Map<string, PodTrace>> {
  return byMaskedKey(
    side,
    podTraces(await side.trace(), { paths: side.paths }),
  );
}

function context(
  side: Side,
  api?: { side: ApiSide; records: Map<string, unknown> },
): ScenarioContext {
  const pods = async () => podTraces(await side.trace(), { paths: side.paths });
  return {
    node: side.node,
    ...(api
      ? {
        api: {
          namespace: api.side.namespace,
          kubectl: api.side.kubectl,
          getJson: api.side.getJson,
          create: api.side.create,
          record: (name, value) => api.records.set(name, value),
        },
      }
      : {}),
    write: (file, manifest) =>
      Deno.writeTextFile(
        `${side.manifestDir}/${file}`,
        typeof manifest === "string" ? manifest : JSON.stringify(manifest),
      ),
    remove: (file) => Deno.remove(`${side.manifestDir}/${file}`),
    restartKubelet: (signal) => side.restartKubelet(signal),
    async waitFor(what, done, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(await pods())) {
        if (Date.now() > deadline) {
          const tail = (await side.log()).split("\n").slice(-15).join("\n");
          throw new Error(
            `${side.kind}: timed out waiting for ${what}; kubelet log tail:\n${tail}`,
          );
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  };
}

/** Differences between the two sides' pods: lifecycle order and configs. */
export function compare(
  ours: Map<string, PodTrace>,
  upstream: Map<string, PodTrace>,
): ScenarioReport["differences"] {
  const out: Difference[] = [];
  const keys = [...new Set([...ours.keys(), ...upstream.keys()])].sort();
  for (const pod of keys) {
    const a = ours.get(pod);
    const b = upstream.get(pod);
    const la = lifecycle(a?.events ?? []);
    const lb = lifecycle(b?.events ?? []);
    if (la.join("\n") !== lb.join("\n")) {
      out.push({
        pod,
        what: "lifecycle",
        detail: `ours [${la.join(", ")}] ≠ upstream [${lb.join(", ")}]`,
      });
    }
    for (const d of jsonDiff(a?.sandboxConfig, b?.sandboxConfig)) {
      out.push({ pod, what: "sandbox", detail: d });
    }
    const names = [
      ...new Set([
        ...Object.keys(a?.containerConfigs ?? {}),
        ...Object.keys(b?.containerConfigs ?? {}),
      ]),
    ].sort();
    for (const name of names) {
      for (
        const d of jsonDiff(
          a?.containerConfigs[name],
          b?.containerConfigs[name],
        )
      ) {
        out.push({ pod, what: `container ${name}`, detail: d });
      }
    }
  }
  return out;
}

/** Differences between the API objects the two sides recorded, masked. */
export function compareRecords(
  ours: Map<string, unknown>,
  upstream: Map<string, unknown>,
  paths: Record<Kind, Record<string, string>>,
): Difference[] {
  const names = [...new Set([...ours.keys(), ...upstream.keys()])].sort();
  return names.flatMap((name) =>
    jsonDiff(
      maskApi(ours.get(name), { paths: paths.ours }),
      maskApi(upstream.get(name), { paths: paths.upstream }),
    ).map((detail) => ({ pod: name, what: "api", detail }))
  );
}

/** Starts both sides, runs `scenario` on each at the same time, compares, tears down. */
export async function runScenario(
  scenario: Scenario,
  bin: string,
): Promise<ScenarioReport> {
  if (scenario.api && apiMissing) throw new Error(apiMissing);
  const tag = crypto.randomUUID().slice(0, 6);
  // joined, each side is its own Node; standalone, both use the same name
  const nodes = scenario.api
    ? { ours: `diff-ours-${tag}`, upstream: `diff-up-${tag}` }
    : { ours: NODE, upstream: NODE };
  const join = scenario.api
    ? { bootstrapKubeconfig: cluster.bootstrapKubeconfig, ca: cluster.ca }
    : undefined;
  // disposed after the pair: a Node deleted while its kubelet runs comes back
  await using cleanup = new AsyncDisposableStack();
  await using pair = await startPair(nodes, bin, NETWORKS, join);
  const { ours, upstream } = pair;
  const records = { ours: new Map(), upstream: new Map() };
  if (scenario.api) {
    const scratch = await Deno.makeTempDir({ prefix: "kts-diff-api-" });
    cleanup.defer(() => Deno.remove(scratch, { recursive: true }));
    const [apiOurs, apiUp] = await Promise.all(
      [ours, upstream].map((s) => startApiSide(s.node, cluster, scratch)),
    );
    cleanup.use(apiOurs!);
    cleanup.use(apiUp!);
    await Promise.all([
      scenario.run(context(ours, { side: apiOurs!, records: records.ours })),
      scenario.run(
        context(upstream, { side: apiUp!, records: records.upstream }),
      ),
    ]);
  } else {
    await Promise.all([
      scenario.run(context(ours)),
      scenario.run(context(upstream)),
    ]);
  }
  const a = await sidePods(ours);
  const b = await sidePods(upstream);
  const lifecycles: ScenarioReport["lifecycles"] = {};
  for (const pod of new Set([...a.keys(), ...b.keys()])) {
    lifecycles[pod] = {
      ours: lifecycle(a.get(pod)?.events ?? []),
      upstream: lifecycle(b.get(pod)?.events ?? []),
    };
  }
  const differences = [
    ...compare(a, b),
    ...compareRecords(records.ours, records.upstream, {
      ours: ours.paths,
      upstream: upstream.paths,
    }),
  ];
  return { scenario: scenario.name, lifecycles, differences };
}
