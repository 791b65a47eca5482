/**
 * Runs a scenario under both kubelets at once and compares what each sent its runtime.
 */
import { cluster, clusterMissing } from "../cluster/_cluster.ts";
import { jsonDiff, lifecycle, type PodTrace, podTraces } from "./normalize.ts";
import { maskApi } from "./normalize_api.ts";
import type { Scenario, ScenarioContext } from "./scenarios.ts";
import { type ApiSide, startApiSide } from "./_api.ts";
import { type CgroupSnapshot, podNames, snapshotCgroups } from "./cgroups.ts";
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
  /** Per cgroup snapshot label, the directories and files each side showed. */
  cgroups: Record<string, Record<Kind, { dirs: number; files: number }>>;
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
  cgroups: Map<string, CgroupSnapshot>,
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
    restartKubelet: (signal, whileStopped) =>
      side.restartKubelet(signal, whileStopped),
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
    async cgroups(label) {
      const names = podNames(await side.trace());
      cgroups.set(label, await snapshotCgroups(side.cgroupRoot, names));
    },
  };
}

/** Differences between the two sides' cgroup snapshots, label by label. */
export function compareCgroups(
  ours: Map<string, CgroupSnapshot>,
  upstream: Map<string, CgroupSnapshot>,
): Difference[] {
  const labels = [...new Set([...ours.keys(), ...upstream.keys()])].sort();
  return labels.flatMap((label) => {
    const a = ours.get(label);
    const b = upstream.get(label);
    const what = `cgroups ${label}`;
    const dirs = (s?: CgroupSnapshot) => new Set(s?.dirs ?? []);
    const [da, db] = [dirs(a), dirs(b)];
    const onlyIn = (x: Set<string>, y: Set<string>, side: string) =>
      [...x].filter((d) => !y.has(d)).map((d) => ({
        pod: "cgroups",
        what,
        detail: `directory only in ${side}: ${d}`,
      }));
    return [
      ...onlyIn(da, db, "ours"),
      ...onlyIn(db, da, "upstream"),
      ...jsonDiff(a?.files, b?.files).map((detail) => ({
        pod: "cgroups",
        what,
        detail,
      })),
    ];
  });
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
  await using pair = await startPair(
    nodes,
    bin,
    NETWORKS,
    join,
    scenario.config,
  );
  const { ours, upstream } = pair;
  const records = { ours: new Map(), upstream: new Map() };
  const cgroups = {
    ours: new Map<string, CgroupSnapshot>(),
    upstream: new Map<string, CgroupSnapshot>(),
  };
  if (scenario.api) {
    const scratch = await Deno.makeTempDir({ prefix: "kts-diff-api-" });
    cleanup.defer(() => Deno.remove(scratch, { recursive: true }));
    const [apiOurs, apiUp] = await Promise.all(
      [ours, upstream].map((s) => startApiSide(s.node, cluster, scratch)),
    );
    cleanup.use(apiOurs!);
    cleanup.use(apiUp!);
    await Promise.all([
      scenario.run(
        context(ours, cgroups.ours, { side: apiOurs!, records: records.ours }),
      ),
      scenario.run(
        context(upstream, cgroups.upstream, {
          side: apiUp!,
          records: records.upstream,
        }),
      ),
    ]);
  } else {
    await Promise.all([
      scenario.run(context(ours, cgroups.ours)),
      scenario.run(context(upstream, cgroups.upstream)),
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
    ...compareCgroups(cgroups.ours, cgroups.upstream),
  ];
  const counted: ScenarioReport["cgroups"] = {};
  for (const [label, snap] of cgroups.ours) {
    const up = cgroups.upstream.get(label);
    counted[label] = {
      ours: { dirs: snap.dirs.length, files: Object.keys(snap.files).length },
      upstream: {
        dirs: up?.dirs.length ?? 0,
        files: Object.keys(up?.files ?? {}).length,
      },
    };
  }
  if (Deno.env.get("KTS_DIFF_KEEP") === "1" && cgroups.ours.size > 0) {
    await Deno.writeTextFile(
      `/tmp/kts-diff-cgroups-${tag}.json`,
      JSON.stringify(
        {
          ours: Object.fromEntries(cgroups.ours),
          upstream: Object.fromEntries(cgroups.upstream),
        },
        null,
        1,
      ),
    );
  }
  return {
    scenario: scenario.name,
    lifecycles,
    cgroups: counted,
    differences,
  };
}
