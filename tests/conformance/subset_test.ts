/**
 * A fixed handful of upstream's [NodeConformance] tests through `deno task conformance`
 * (scripts/conformance.ts): the harness end to end on every CI run, in a few minutes. The
 * full set is the task itself (docs/conformance.md). Skips when the e2e suite is not built
 * (bash scripts/peers.sh build-e2e) or without root.
 */
import assert from "node:assert/strict";
import { run } from "../cluster/_cluster.ts";
import type { TestResult } from "./report.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Which kubelet the subset runs against: kubelet.ts, which passes it since its volumes landed. */
const KUBELET = "ours";

/** Quick tests covering pod start, env, volumes, logs and exec through the API server. */
const SUBSET = [
  "Pods should get a host IP",
  "Downward API should provide pod UID as env vars",
  "Security Context When creating a container with runAsUser should run the container with uid 0",
  "Kubelet when scheduling a busybox command in a pod should print the output to logs",
  "Variable Expansion should allow composing env vars into new env vars",
  "EmptyDir volumes should support \\(root,0644,default\\)",
];

async function e2eMissing(): Promise<string | undefined> {
  if (Deno.uid() !== 0) return "needs root (containerd and the kubelet)";
  const r = await run("bash", [`${ROOT}/scripts/peers.sh`, "e2e-dir"]);
  return r.code === 0
    ? undefined
    : "the e2e suite is not built: run bash scripts/peers.sh build-e2e";
}

const missing = await e2eMissing();
if (missing) {
  // deno-lint-ignore no-console
  console.warn(`tests/conformance/subset_test.ts skipped: ${missing}`);
}

Deno.test({
  name:
    `a fixed [NodeConformance] subset passes against the ${KUBELET} kubelet`,
  ignore: missing !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "kts-conformance-subset-" });
    const r = await run(Deno.execPath(), [
      "run",
      "--allow-all",
      `${ROOT}/scripts/conformance.ts`,
      `--kubelet=${KUBELET}`,
      `--focus=${SUBSET.join("|")}`,
      "--procs=2",
      // Slot 2: apart from a full run of the task (slot 0) on the same machine, and from
      // slot 1's subnets (10.123, 10.124), which tests/cluster/kubectl_diff_test.ts uses.
      "--slot=2",
      "--timeout=15m",
      `--out=${out}`,
    ]);
    assert.equal(
      r.code,
      0,
      `conformance task failed:\n${r.stderr.slice(-4000)}`,
    );
    const { results } = JSON.parse(
      await Deno.readTextFile(`${out}/${KUBELET}/results.json`),
    ) as { results: TestResult[] };
    const failed = results.filter((t) => t.outcome !== "passed");
    assert.deepEqual(failed, [], `see ${out}/${KUBELET}/e2e.log`);
    assert.equal(
      results.length,
      SUBSET.length,
      results.map((t) => t.name).join("\n"),
    );
    await Deno.remove(out, { recursive: true });
  },
});
