/**
 * Runs a scenario under both kubelets at once and compares what each sent its runtime.
 */
import { jsonDiff, lifecycle, type PodTrace, podTraces } from "./normalize.ts";
import type { Scenario, ScenarioContext } from "./scenarios.ts";
import { type Side, startPair } from "./_sides.ts";

export const NODE = "diff-node";

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

function context(side: Side): ScenarioContext {
  const pods = async () => podTraces(await side.trace(), { paths: side.paths });
  return {
    node: NODE,
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

/** Starts both sides, runs `scenario` on each at the same time, compares, tears down. */
export async function runScenario(
  scenario: Scenario,
  bin: string,
): Promise<ScenarioReport> {
  await using pair = await startPair(NODE, bin, NETWORKS);
  const { ours, upstream } = pair;
  await Promise.all([
    scenario.run(context(ours)),
    scenario.run(context(upstream)),
  ]);
  const a = podTraces(await ours.trace(), { paths: ours.paths });
  const b = podTraces(await upstream.trace(), { paths: upstream.paths });
  const lifecycles: ScenarioReport["lifecycles"] = {};
  for (const pod of new Set([...a.keys(), ...b.keys()])) {
    lifecycles[pod] = {
      ours: lifecycle(a.get(pod)?.events ?? []),
      upstream: lifecycle(b.get(pod)?.events ?? []),
    };
  }
  return { scenario: scenario.name, lifecycles, differences: compare(a, b) };
}
