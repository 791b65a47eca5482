/**
 * `deno task diff [--short] [--focus=<text>] [--out=<file>]`: runs the differential
 * scenarios (tests/diff/scenarios.ts) under kubelet.ts and the upstream kubelet, each on its
 * own containerd behind a recording CRI proxy (the API-mode ones joined to the control plane of
 * scripts/cluster_env.sh, skipped without it), and prints a Markdown report: per scenario,
 * every pod's lifecycle on both sides and each difference, marked with the reason when
 * docs/differences.md keeps it (tests/diff/known_differences.ts). Needs root and the peer
 * binaries (bash scripts/peers.sh build).
 */
import { explain } from "../tests/diff/known_differences.ts";
import { API_SCENARIOS } from "../tests/diff/api_scenarios.ts";
import {
  apiMissing,
  runScenario,
  type ScenarioReport,
} from "../tests/diff/run.ts";
import { SCENARIOS } from "../tests/diff/scenarios.ts";

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  return Deno.args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

async function peersBin(): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: [new URL("./peers.sh", import.meta.url).pathname, "dir"],
    stderr: "inherit",
  }).output();
  if (out.code !== 0) {
    throw new Error("peer binaries missing: run bash scripts/peers.sh build");
  }
  return new TextDecoder().decode(out.stdout).trim();
}

function render(report: ScenarioReport, seconds: number): string {
  const lines = [`## ${report.scenario} (${seconds.toFixed(0)} s)`, ""];
  for (const [pod, l] of Object.entries(report.lifecycles)) {
    lines.push(`- \`${pod}\``);
    lines.push(`  - ours: ${l.ours.join(" → ") || "(nothing)"}`);
    lines.push(`  - upstream: ${l.upstream.join(" → ") || "(nothing)"}`);
  }
  for (const [label, c] of Object.entries(report.cgroups)) {
    lines.push(
      `- cgroups ${label}: ours ${c.ours.dirs} directories, ${c.ours.files} files; ` +
        `upstream ${c.upstream.dirs} directories, ${c.upstream.files} files`,
    );
  }
  lines.push("");
  if (report.differences.length === 0) lines.push("No differences.");
  for (const d of report.differences) {
    const why = explain(report.scenario, d);
    lines.push(
      `- ${why ? "kept" : "**new**"}: \`${d.pod}\` ${d.what}: ${d.detail}` +
        (why ? ` — ${why}` : ""),
    );
  }
  lines.push("");
  return lines.join("\n");
}

const bin = await peersBin();
const focus = option("focus");
const chosen = [...SCENARIOS, ...API_SCENARIOS].filter((s) =>
  (!Deno.args.includes("--short") || s.short) &&
  (!focus || s.name.includes(focus))
);
const parts = ["# Differential run: kubelet.ts vs the upstream kubelet", ""];
let unexplained = 0;
for (const scenario of chosen) {
  if (scenario.api && apiMissing) {
    parts.push(`## ${scenario.name}\n\nSkipped: ${apiMissing}\n`);
    continue;
  }
  const t0 = performance.now();
  try {
    const report = await runScenario(scenario, bin);
    unexplained += report.differences.filter((d) =>
      !explain(scenario.name, d)
    ).length;
    parts.push(render(report, (performance.now() - t0) / 1000));
  } catch (e) {
    unexplained++;
    parts.push(`## ${scenario.name}\n\nFailed to run: ${e}\n`);
  }
  // deno-lint-ignore no-console
  console.error(`done: ${scenario.name}`);
}
parts.push(
  `${unexplained} difference(s) not explained in docs/differences.md.`,
);
const text = parts.join("\n") + "\n";
const out = option("out");
if (out) await Deno.writeTextFile(out, text);
// deno-lint-ignore no-console
console.log(text);
Deno.exit(unexplained === 0 ? 0 : 1);
