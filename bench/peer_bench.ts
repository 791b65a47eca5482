/**
 * kubelet.ts against the upstream kubelet on real containerd, side by side in one run. Each
 * kubelet has its own containerd behind a recording CRI proxy (tests/diff/_sides.ts); a pod
 * counts as started when its StartContainer call returned, as the proxy saw it.
 *
 * (a) cold start: kubelet process started → its first static pod started (one manifest in
 *     place before start); the two kubelets start one after the other.
 * (b) pod start: manifest written → container started, 10 pods (with the burst's 100, the
 *     110 of (c)), the two kubelets taking turns so neither competes with the other for the
 *     CPU; p50 ratio, target ≤ 0.8.
 * (idle) RSS of each kubelet with no pods, 20 s after both started (target ≤ 50 MiB for ours).
 * (burst) 100 manifests written at once (the pods of (b) running): first manifest written →
 *     the last pod started, one kubelet after the other; target ratio ≤ 0.5.
 * (c) steady state with 110 running pods each (`--pods=N` for another count, e.g. 250): CPU
 *     (cores) and RSS of the kubelet process, sampled from /proc over 30 s at the same time;
 *     targets: CPU ratio ≤ 0.3, RSS ≤ 0.7; and each side's CRI calls per second by method in
 *     that window (from its proxy's trace).
 * Every run prints the load average (`/proc/loadavg`) at its start and end.
 *
 * kubelet.ts runs as `deno run main.ts` (not the compiled binary: no denort here).
 * Needs root, `bash scripts/peers.sh build` and the test images of scripts/cri_env.sh.
 * Run: `deno run -A bench/peer_bench.ts [--quick] [--steady] [--pods=N]` (`--quick`: 5 pods,
 * 20 steady pods, a burst of 10, 10 s; `--steady`: skip (a), for repeated CPU and RSS
 * comparisons). The kubelet API's requests/s are measured by `bench/cluster_bench.ts --api`
 * (joined, with the API server's client certificate for both kubelets).
 *
 * @module
 */
// deno-lint-ignore-file no-console

import { type Kind, startPair, startSide } from "../tests/diff/_sides.ts";
import { machineCpu, peersBinOrSkip, percentile, usage } from "./_peers.ts";
import { callsByMethod, sleeper, waitStarted } from "./_pod_starts.ts";

const QUICK = Deno.args.includes("--quick");
const STEADY_ONLY = Deno.args.includes("--steady");
const STARTS = QUICK ? 5 : 10;
const PODS_ARG = Deno.args.find((a) => a.startsWith("--pods="));
const BURST = QUICK ? 10 : 100;
const STEADY = PODS_ARG ? Number(PODS_ARG.slice(7)) : QUICK ? 20 : 110;
if (!Number.isInteger(STEADY) || STEADY < STARTS + BURST) {
  console.error(
    `--pods must be a whole number of at least ${
      STARTS + BURST
    } (the pod start and burst pods count)`,
  );
  Deno.exit(2);
}
const SAMPLE_MS = QUICK ? 10_000 : 30_000;
const NODE = "bench-node";

const NETWORKS: Record<Kind, { bridge: string; subnet: string }> = {
  ours: { bridge: "ktsb0", subnet: "10.84.0.0/16" },
  upstream: { bridge: "ktsb1", subnet: "10.85.0.0/16" },
};

const key = (name: string) => `default/${name}-${NODE}`;
const bin = await peersBinOrSkip();
const loadavg = async () =>
  (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
const results: string[] = [];
/** Prints a figure at once (a long run that fails later still shows it) and keeps it. */
const report = (line: string) => {
  console.log(line);
  results.push(line);
};
report(`load average at start: ${await loadavg()}`);

// (a) cold start, one kubelet at a time.
const cold: Record<Kind, number> = { ours: 0, upstream: 0 };
// of it, the time inside the first pod's own runtime calls
const coldRuntime: Record<Kind, number> = { ours: 0, upstream: 0 };
for (const kind of STEADY_ONLY ? [] : ["ours", "upstream"] as const) {
  await using side = await startSide({
    kind,
    node: NODE,
    bin,
    ...NETWORKS[kind],
    manifests: { "first.yaml": sleeper("first") },
  });
  const started = await waitStarted(side, [key("first")]);
  cold[kind] = started.get(key("first"))! - (await side.kubelet()).startedAt;
  coldRuntime[kind] = started.inRuntime.get(key("first")) ?? 0;
}
if (!STEADY_ONLY) {
  report(
    `cold start → first pod started: ours ${
      Math.round(cold.ours)
    } ms, upstream ${Math.round(cold.upstream)} ms, ratio ${
      (cold.ours / cold.upstream).toFixed(2)
    } (target ≤ 0.5)`,
  );
  report(
    `  inside the first pod's runtime calls: ours ${
      Math.round(coldRuntime.ours)
    } ms, upstream ${
      Math.round(coldRuntime.upstream)
    } ms; ratio with no kubelet time at all on our side ${
      (coldRuntime.ours / cold.upstream).toFixed(2)
    }`,
  );
}

// (b) and (c) with both kubelets up.
await using sides = await startPair(
  { ours: NODE, upstream: NODE },
  bin,
  NETWORKS,
  undefined,
  // the count, not the default 110, is each kubelet's admission limit
  STEADY > 110 ? [`maxPods: ${STEADY}`] : undefined,
);
const { ours, upstream } = sides;
const pids = {
  ours: (await ours.kubelet()).pid,
  upstream: (await upstream.kubelet()).pid,
};
// Idle: no pods yet, both started and settled.
await new Promise((r) => setTimeout(r, 20_000));
const idle = {
  ours: (await usage(pids.ours)).rssMiB,
  upstream: (await usage(pids.upstream)).rssMiB,
};
report(
  `idle RSS (no pods): ours ${idle.ours.toFixed(0)} MiB, upstream ${
    idle.upstream.toFixed(0)
  } MiB (target ≤ 50 MiB for ours)`,
);
const latency: Record<Kind, number[]> = { ours: [], upstream: [] };
// manifest written → RunPodSandbox sent: the kubelet's own reaction time.
const reaction: Record<Kind, number[]> = { ours: [], upstream: [] };
// time inside the pod's own runtime calls, and the rest of its start (the kubelet's part)
const inRuntime: Record<Kind, number[]> = { ours: [], upstream: [] };
const callMs: Record<Kind, Map<string, number[]>> = {
  ours: new Map(),
  upstream: new Map(),
};
const kubeletPart: Record<Kind, number[]> = { ours: [], upstream: [] };
for (let i = 0; i < STARTS; i++) {
  for (const kind of ["ours", "upstream"] as const) {
    const name = `start-${i}`;
    const t0 = Date.now();
    await Deno.writeTextFile(
      `${sides[kind].manifestDir}/${name}.yaml`,
      JSON.stringify(sleeper(name)),
    );
    const started = await waitStarted(sides[kind], [key(name)], 60_000);
    const took = started.get(key(name))! - t0;
    latency[kind].push(took);
    reaction[kind].push(started.sandboxSent.get(key(name))! - t0);
    callMs[kind] = started.callMs;
    const runtime = started.inRuntime.get(key(name)) ?? 0;
    inRuntime[kind].push(runtime);
    kubeletPart[kind].push(took - runtime);
  }
}
const p = (values: number[], q: number) => Math.round(percentile(values, q));
const p50 = (k: Kind) => p(latency[k], 50);
report(
  `pod start (manifest → started, ${STARTS} pods) p50: ours ${
    p50("ours")
  } ms, ` +
    `upstream ${p50("upstream")} ms, ratio ${
      (p50("ours") / p50("upstream")).toFixed(2)
    } (target ≤ 0.8); p99 ours ${p(latency.ours, 99)} ms, upstream ${
      p(latency.upstream, 99)
    } ms; manifest → RunPodSandbox p50 ours ${p(reaction.ours, 50)} ms, ` +
    `upstream ${p(reaction.upstream, 50)} ms`,
);
// The runtime's part bounds the ratio: with no kubelet time at all, ours would take its
// runtime part alone.
report(
  `pod start split p50: inside the pod's RunPodSandbox/CreateContainer/StartContainer ` +
    `ours ${p(inRuntime.ours, 50)} ms, upstream ${
      p(inRuntime.upstream, 50)
    } ms; the rest (kubelet) ours ${p(kubeletPart.ours, 50)} ms, upstream ${
      p(kubeletPart.upstream, 50)
    } ms; ratio with no kubelet time on our side ${
      (p(inRuntime.ours, 50) / p50("upstream")).toFixed(2)
    }; per call p50 ${
      ["RunPodSandbox", "CreateContainer", "StartContainer"].map((c) =>
        `${c} ours ${p(callMs.ours.get(c) ?? [], 50)} ms, upstream ${
          p(callMs.upstream.get(c) ?? [], 50)
        } ms`
      ).join("; ")
    }`,
);

const burst: Record<Kind, number> = { ours: 0, upstream: 0 };
// CPU seconds the kubelet and the whole machine spent on the burst: the runtime's share
// (containerd, shims, runc, CNI) bounds what a faster kubelet can gain.
const burstCpu: Record<Kind, { kubelet: number; machine: number }> = {
  ours: { kubelet: 0, machine: 0 },
  upstream: { kubelet: 0, machine: 0 },
};
for (const kind of ["ours", "upstream"] as const) {
  const names: string[] = [];
  const cpuBefore = {
    kubelet: (await usage(pids[kind])).cpu,
    machine: await machineCpu(),
  };
  const t0 = Date.now();
  for (let i = STARTS; i < STARTS + BURST; i++) {
    const name = `burst-${i}`;
    names.push(key(name));
    await Deno.writeTextFile(
      `${sides[kind].manifestDir}/${name}.yaml`,
      JSON.stringify(sleeper(name)),
    );
  }
  const started = await waitStarted(sides[kind], names, 600_000);
  burst[kind] = Math.max(...names.map((n) => started.get(n)!)) - t0;
  burstCpu[kind] = {
    kubelet: (await usage(pids[kind])).cpu - cpuBefore.kubelet,
    machine: await machineCpu() - cpuBefore.machine,
  };
}
report(
  `burst of ${BURST} (first manifest → last pod started): ours ${
    (burst.ours / 1000).toFixed(1)
  } s, upstream ${(burst.upstream / 1000).toFixed(1)} s, ratio ${
    (burst.ours / burst.upstream).toFixed(2)
  } (target ≤ 0.5)`,
);
report(
  `burst CPU seconds, kubelet / whole machine: ours ${
    burstCpu.ours.kubelet.toFixed(1)
  } / ${burstCpu.ours.machine.toFixed(1)}, upstream ${
    burstCpu.upstream.kubelet.toFixed(1)
  } / ${burstCpu.upstream.machine.toFixed(1)}`,
);

for (const kind of ["ours", "upstream"] as const) {
  const names: string[] = [];
  for (let i = STARTS + BURST; i < STEADY; i++) {
    const name = `steady-${i}`;
    names.push(key(name));
    await Deno.writeTextFile(
      `${sides[kind].manifestDir}/${name}.yaml`,
      JSON.stringify(sleeper(name)),
    );
  }
  if (!names.length) continue;
  const t0 = Date.now();
  await waitStarted(sides[kind], names, 900_000);
  report(
    `${kind}: ${names.length} more pods started in ${
      ((Date.now() - t0) / 1000).toFixed(1)
    } s`,
  );
}
// Let both settle (first relists, status updates) before sampling.
await new Promise((r) => setTimeout(r, 15_000));
const before = {
  ours: await usage(pids.ours),
  upstream: await usage(pids.upstream),
};
await new Promise((r) => setTimeout(r, SAMPLE_MS));
const after = {
  ours: await usage(pids.ours),
  upstream: await usage(pids.upstream),
};
const windowEnd = Date.now();
const cores = (k: Kind) => (after[k].cpu - before[k].cpu) / (SAMPLE_MS / 1000);
// CRI calls per second per method in the sampling window, as each side's proxy saw them
for (const kind of ["ours", "upstream"] as const) {
  const from = windowEnd - SAMPLE_MS;
  const counts = callsByMethod(await sides[kind].trace(), from, windowEnd);
  const perSecond = (n: number) => (n / (SAMPLE_MS / 1000)).toFixed(1);
  const all = [...counts.values()].reduce((a, b) => a + b, 0);
  report(
    `steady ${STEADY} pods: ${kind} CRI calls/s ${perSecond(all)} (${
      [...counts].sort((a, b) => b[1] - a[1]).map(([m, n]) =>
        `${m} ${perSecond(n)}`
      ).join(", ")
    })`,
  );
}
const rss = (k: Kind) => after[k].rssMiB;
report(
  `steady ${STEADY} pods: CPU ours ${
    cores("ours").toFixed(4)
  } cores, upstream ${cores("upstream").toFixed(4)} cores, ratio ${
    (cores("ours") / cores("upstream")).toFixed(2)
  } (target ≤ 0.3)`,
);
report(
  `steady ${STEADY} pods: RSS ours ${rss("ours").toFixed(0)} MiB, upstream ${
    rss("upstream").toFixed(0)
  } MiB, ratio ${(rss("ours") / rss("upstream")).toFixed(2)} (target ≤ 0.7)`,
);
report(`load average at end: ${await loadavg()}`);
console.log(`\n${results.join("\n")}`);
