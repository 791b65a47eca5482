/**
 * `--dry-run` start-up cost: wall time of
 * `deno run -A main.ts --dry-run --config tests/fixtures/kubeadm_config.yaml`
 * against `deno run` of an empty script, interleaved, N runs each.
 * Target: p50 ratio ≤ 2.0.
 */
const ROOT = new URL("..", import.meta.url).pathname;
const N = Number(Deno.env.get("DRY_RUN_BENCH_N") ?? "15");
const TARGET = 2.0;

async function timeRun(args: string[]): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  if (!out.success) {
    throw new Error(
      `deno ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return ms;
}

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[mid] ?? 0
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const empty = await Deno.makeTempFile({ prefix: "kts-empty-", suffix: ".ts" });
try {
  const dryRun = [
    "run",
    "-A",
    "main.ts",
    "--dry-run",
    "--config",
    "tests/fixtures/kubeadm_config.yaml",
  ];
  const baseline = ["run", "-A", empty];
  // Warm the module cache once so the loop measures start-up, not downloads.
  await timeRun(dryRun);
  await timeRun(baseline);
  const dryTimes: number[] = [];
  const emptyTimes: number[] = [];
  for (let i = 0; i < N; i++) {
    dryTimes.push(await timeRun(dryRun));
    emptyTimes.push(await timeRun(baseline));
  }
  const dry = p50(dryTimes);
  const base = p50(emptyTimes);
  const ratio = dry / base;
  // deno-lint-ignore no-console
  console.log(
    `dry-run (kubeadm config) p50: ${dry.toFixed(1)} ms over ${N} runs`,
  );
  // deno-lint-ignore no-console
  console.log(
    `empty script p50:            ${base.toFixed(1)} ms over ${N} runs`,
  );
  // deno-lint-ignore no-console
  console.log(
    `ratio: ${ratio.toFixed(2)} (target <= ${TARGET.toFixed(1)}) ${
      ratio <= TARGET ? "OK" : "OVER TARGET"
    }`,
  );
} finally {
  await Deno.remove(empty);
}
