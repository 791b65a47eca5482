/**
 * Pod decision and sync micro-benchmarks (human-readable lines):
 *
 * (a) `computePodActions` on a 10-container pod that needs nothing: decisions per second;
 *     target ≥ 50,000/s (a 1,000-pod resync would cost ≤ 20 ms of decisions).
 * (b) steady-state `syncPod` of 110 running pods on the simulated runtime: wall time of one
 *     full resync pass; target ≤ 250 ms (≤ 0.5 % of the 1 min resync interval, one core).
 *
 * Run: `deno run -A bench/pod_sync_bench.ts`
 *
 * @module
 */
// deno-lint-ignore-file no-console

import { FakeClock } from "../src/clock/testing.ts";
import { CaptureLogger } from "../src/log/testing.ts";
import { computePodActions, createPodSyncer } from "../src/pod/mod.ts";
import type { Pod } from "../src/pod/mod.ts";
import { makeContainerView, makePodRuntimeStatus } from "../src/pod/testing.ts";
import { createSimRuntime } from "../src/runtime/sim/mod.ts";
import { createPodStatusManager } from "../src/status/mod.ts";

function benchActions(): void {
  const containers = Array.from(
    { length: 10 },
    (_, i) => ({ name: `c${i}`, image: `img:${i}` }),
  );
  const pod: Pod = {
    metadata: { name: "p", namespace: "d", uid: "u" },
    spec: { containers },
  };
  const status = makePodRuntimeStatus(
    [{
      id: "s",
      attempt: 0,
      ready: true,
      createdAt: 1,
      ip: "10.0.0.1",
      additionalIps: [],
    }],
    containers.map((c) => makeContainerView(c, { id: c.name, sandboxId: "s" })),
    { uid: "u", name: "p", namespace: "d" },
  );
  for (let i = 0; i < 2_000; i++) computePodActions(pod, status); // warm-up
  const n = 20_000;
  const start = performance.now();
  for (let i = 0; i < n; i++) computePodActions(pod, status);
  const perSecond = n / ((performance.now() - start) / 1000);
  console.log(
    `computePodActions (10 containers, steady): ${
      Math.round(perSecond)
    }/s; target >= 50000/s; ratio ${
      (perSecond / 50_000).toFixed(2)
    } (>= 1 is good)`,
  );
}

async function benchResync(): Promise<void> {
  const clock = new FakeClock();
  const runtime = createSimRuntime({ clock });
  const syncer = createPodSyncer({
    runtime,
    images: runtime,
    clock,
    logger: new CaptureLogger(),
    statusManager: createPodStatusManager(),
    mkdir: () => Promise.resolve(),
  }, { podLogsDir: "/bench", serializeImagePulls: true, nodeName: "bench" });
  const signal = new AbortController().signal;
  const pods: Pod[] = Array.from({ length: 110 }, (_, i) => ({
    metadata: { name: `p${i}`, namespace: "default", uid: `uid-${i}` },
    spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
  }));
  for (const pod of pods) {
    await syncer.syncPod({ pod, updateType: "create" }, signal);
  }
  const start = performance.now();
  for (const pod of pods) {
    await syncer.syncPod({ pod, updateType: "sync" }, signal);
  }
  const ms = performance.now() - start;
  console.log(
    `steady-state resync of 110 pods (sim runtime): ${
      ms.toFixed(1)
    } ms; target <= 250 ms; ratio ${(ms / 250).toFixed(2)} (<= 1 is good)`,
  );
}

benchActions();
await benchResync();
