/**
 * The short differential scenarios: each runs under kubelet.ts and the upstream kubelet at
 * once, each kubelet on its own containerd behind a recording CRI proxy, and every
 * difference in what they sent the runtime must be one docs/differences.md keeps
 * (tests/diff/known_differences.ts). `deno task diff` runs all of them with a report.
 */
import assert from "node:assert/strict";
import { explain } from "./known_differences.ts";
import { API_SCENARIOS } from "./api_scenarios.ts";
import { apiMissing, runScenario } from "./run.ts";
import { SCENARIOS } from "./scenarios.ts";
import { peersOutput } from "../_peers.ts";

const bin = Deno.env.get("KUBELET_TS_CRI_ENDPOINT") && Deno.uid() === 0
  ? await peersOutput("dir")
  : undefined;

for (
  const scenario of [...SCENARIOS, ...API_SCENARIOS].filter((s) => s.short)
) {
  Deno.test({
    name: `differential: ${scenario.name}`,
    // Needs root, containerd (scripts/cri_env.sh) and the peers (scripts/peers.sh build);
    // API scenarios also the control plane (scripts/cluster_env.sh).
    ignore: bin === undefined || (scenario.api === true && !!apiMissing),
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const report = await runScenario(scenario, bin!);
      assert.ok(
        Object.keys(report.lifecycles).length > 0,
        "neither kubelet ran a pod",
      );
      for (const [pod, l] of Object.entries(report.lifecycles)) {
        assert.ok(l.ours.length > 0, `kubelet.ts never ran ${pod}`);
        assert.ok(
          l.upstream.length > 0,
          `the upstream kubelet never ran ${pod}`,
        );
      }
      // an empty tree on either side would compare equal and prove nothing
      for (const [label, c] of Object.entries(report.cgroups)) {
        assert.ok(c.ours.files > 0, `kubelet.ts wrote no cgroups (${label})`);
        assert.ok(
          c.upstream.files > 0,
          `the upstream kubelet wrote no cgroups (${label})`,
        );
      }
      const unexplained = report.differences.filter((d) =>
        !explain(scenario.name, d)
      );
      assert.deepEqual(
        unexplained.map((d) => `${d.pod} ${d.what}: ${d.detail}`),
        [],
        "differences not listed in docs/differences.md",
      );
    },
  });
}
