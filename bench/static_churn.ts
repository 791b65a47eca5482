/**
 * CPU per pod through a whole static pod life, each kubelet alone on real containerd behind
 * the recording CRI proxy (tests/diff/_sides.ts): rounds of N manifests written, every pod
 * started, the manifests removed and every sandbox removed. Reported per kubelet: CPU seconds
 * per pod (and above its idle CPU, measured for 20 s first), the CPU of each of its threads
 * by name (for kubelet.ts: the main thread `deno`, V8's helper threads, the tokio I/O
 * threads), the RSS after the rounds and the CRI calls by method.
 *
 * No API server: the per-pod work of the kubelet and its runtime calls, without status
 * writes (bench/cluster_bench.ts has the churn through the API server).
 *
 * Needs root, `bash scripts/peers.sh build` and the test images of scripts/cri_env.sh.
 * Run: `deno run -A bench/static_churn.ts [--pods=10] [--rounds=2] [--kubelet=ours|upstream]`;
 * `KTS_KUBELET_V8_FLAGS` sets kubelet.ts's V8 flags for a comparison.
 *
 * @module
 */
// deno-lint-ignore-file no-console

import { type Kind, startSide } from "../tests/diff/_sides.ts";
import { shortMethod } from "../tests/diff/normalize.ts";
import { peersBinOrSkip, usage } from "./_peers.ts";
import { sleeper, waitStarted } from "./_pod_starts.ts";

const arg = (name: string) =>
  Deno.args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const PODS = Number(arg("pods") ?? 10);
const ROUNDS = Number(arg("rounds") ?? 2);
const ONLY = arg("kubelet");
if (
  !Number.isInteger(PODS) || PODS < 1 || !Number.isInteger(ROUNDS) ||
  ROUNDS < 1 || (ONLY !== undefined && ONLY !== "ours" && ONLY !== "upstream")
) {
  console.error(
    "usage: static_churn.ts [--pods=N (≥ 1)] [--rounds=N (≥ 1)] [--kubelet=ours|upstream]",
  );
  Deno.exit(2);
}
const bin = await peersBinOrSkip();
const NETWORKS: Record<Kind, { bridge: string; subnet: string }> = {
  ours: { bridge: "ktsb0", subnet: "10.84.0.0/16" },
  upstream: { bridge: "ktsb1", subnet: "10.85.0.0/16" },
};

/** CPU seconds by thread name (digits at the end dropped, so pools add up). */
async function threadCpu(pid: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
    try {
      const dir = `/proc/${pid}/task/${task.name}`;
      const name = (await Deno.readTextFile(`${dir}/comm`)).trim()
        .replace(/[0-9]+$/, "");
      const stat = await Deno.readTextFile(`${dir}/stat`);
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(
        name,
        (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / 100,
      );
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

const removed = async (side: { trace(): Promise<{ method: string }[]> }) =>
  (await side.trace()).filter((e) =>
    shortMethod(e.method) === "RemovePodSandbox"
  )
    .length;

console.log(
  `load average at start: ${await Deno.readTextFile("/proc/loadavg")}`.trim(),
);
for (const kind of ["ours", "upstream"] as const) {
  if (ONLY && ONLY !== kind) continue;
  await using side = await startSide({
    kind,
    node: "churn",
    bin,
    ...NETWORKS[kind],
    manifests: {},
  });
  const pid = (await side.kubelet()).pid;
  await new Promise((r) => setTimeout(r, 10_000));
  const idleFrom = (await usage(pid)).cpu;
  await new Promise((r) => setTimeout(r, 20_000));
  const idle = ((await usage(pid)).cpu - idleFrom) / 20;
  const cpuFrom = (await usage(pid)).cpu;
  const threadsFrom = await threadCpu(pid);
  const t0 = Date.now();
  let gone = await removed(side);
  for (let round = 0; round < ROUNDS; round++) {
    const names = Array.from({ length: PODS }, (_, i) => `c${round}-${i}`);
    for (const name of names) {
      await Deno.writeTextFile(
        `${side.manifestDir}/${name}.yaml`,
        JSON.stringify(sleeper(name)),
      );
    }
    await waitStarted(side, names.map((n) => `default/${n}-churn`), 300_000);
    for (const name of names) {
      await Deno.remove(`${side.manifestDir}/${name}.yaml`);
    }
    const deadline = Date.now() + 300_000;
    while ((await removed(side)) - gone < PODS) {
      if (Date.now() > deadline) {
        throw new Error(`${kind}: sandboxes not removed within 300 s`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    gone = await removed(side);
  }
  const seconds = (Date.now() - t0) / 1000;
  const after = await usage(pid);
  const threads = await threadCpu(pid);
  const pods = PODS * ROUNDS;
  const cpu = after.cpu - cpuFrom;
  const calls = new Map<string, number>();
  for (const e of await side.trace()) {
    const m = shortMethod(e.method);
    calls.set(m, (calls.get(m) ?? 0) + 1);
  }
  console.log(
    `${kind}: ${pods} pods in ${seconds.toFixed(1)} s; CPU ${
      cpu.toFixed(2)
    } s = ${(cpu / pods * 1000).toFixed(0)} ms per pod, ${
      ((cpu - idle * seconds) / pods * 1000).toFixed(0)
    } ms above its idle ${idle.toFixed(4)} cores; RSS after ${
      after.rssMiB.toFixed(0)
    } MiB`,
  );
  console.log(
    `${kind}: CPU s by thread: ${
      [...threads].map(([name, s]) =>
        [name, s - (threadsFrom.get(name) ?? 0)] as const
      )
        .filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1])
        .map(([name, s]) => `${name} ${s.toFixed(2)}`).join(", ")
    }`,
  );
  console.log(
    `${kind}: CRI calls ${
      [...calls].sort((a, b) => b[1] - a[1]).map(([m, n]) => `${m} ${n}`).join(
        ", ",
      )
    }`,
  );
}
console.log(
  `load average at end: ${await Deno.readTextFile("/proc/loadavg")}`.trim(),
);
