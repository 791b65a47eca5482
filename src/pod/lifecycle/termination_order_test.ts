import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { RuntimeService } from "../../runtime/mod.ts";
import { killPod } from "./pod_kill.ts";
import { terminationPrerequisites } from "./termination_order.ts";
import { makeContainerView } from "../testing.ts";
import type { Container, Pod } from "../types.ts";

const sidecar = (name: string, extra: Partial<Container> = {}): Container => ({
  name,
  image: "busybox",
  restartPolicy: "Always",
  ...extra,
});
const plain = (name: string, extra: Partial<Container> = {}): Container => ({
  name,
  image: "busybox",
  ...extra,
});

function podOf(
  inits: Container[],
  containers: Container[],
  grace = 30,
): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: {
      initContainers: inits,
      containers,
      terminationGracePeriodSeconds: grace,
    },
  };
}

const PREREQUISITE_CASES: {
  name: string;
  pod: Pod;
  running: string[];
  want: Record<string, string[]>;
}[] = [
  {
    name: "no sidecars: nobody waits",
    pod: podOf([plain("init")], [plain("a"), plain("b")]),
    running: ["a", "b"],
    want: {},
  },
  {
    name: "sidecars wait for the regular containers and the next sidecar",
    pod: podOf([sidecar("s1"), plain("init"), sidecar("s2"), sidecar("s3")], [
      plain("a"),
      plain("b"),
    ]),
    running: ["a", "b", "s1", "s2", "s3"],
    want: { s3: ["a", "b"], s2: ["a", "b", "s3"], s1: ["a", "b", "s2"] },
  },
  {
    name: "stopped containers are not waited for",
    pod: podOf([sidecar("s1"), sidecar("s2")], [plain("a"), plain("b")]),
    running: ["b", "s1"],
    want: { s1: ["b"] },
  },
  {
    // upstream links each sidecar to the next declared one only, running or not
    name: "a stopped middle sidecar does not chain to the one after it",
    pod: podOf([sidecar("s1"), sidecar("s2"), sidecar("s3")], [plain("a")]),
    running: ["a", "s1", "s3"],
    want: { s3: ["a"], s1: ["a"] },
  },
];

for (const c of PREREQUISITE_CASES) {
  Deno.test(`terminationPrerequisites() ${c.name}`, () => {
    assert.deepEqual(
      Object.fromEntries(terminationPrerequisites(c.pod, c.running)),
      c.want,
    );
  });
}

/** A runtime whose stops take `stopMs` of fake time each and are logged with their start. */
function slowStops(clock: FakeClock, stopMs: number) {
  const log: { name: string; at: number; timeout: bigint }[] = [];
  const hooks: { name: string; at: number }[] = [];
  const runtime = {
    async stopContainer(
      request: Parameters<RuntimeService["stopContainer"]>[0],
    ) {
      const name = (request.containerId ?? "").replace(/^id-/, "");
      log.push({
        name,
        at: clock.now(),
        timeout: BigInt(request.timeout ?? 0),
      });
      await clock.sleep(stopMs);
      return {};
    },
    execSync(request: Parameters<RuntimeService["execSync"]>[0]) {
      hooks.push({
        name: (request.containerId ?? "").replace(/^id-/, ""),
        at: clock.now(),
      });
      return Promise.resolve({
        exitCode: 0,
        stdout: new Uint8Array(),
        stderr: new Uint8Array(),
      });
    },
    stopPodSandbox: () => Promise.resolve({}),
  } as unknown as RuntimeService;
  return { runtime, log, hooks };
}

async function runKill(pod: Pod, stopMs: number, advanceMs: number) {
  const clock = new FakeClock();
  const { runtime, log, hooks } = slowStops(clock, stopMs);
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  const start = clock.now();
  const done = killPod({
    runtime,
    clock,
    logger: new CaptureLogger(),
    runtimeRequestTimeoutMs: 0,
  }, {
    pod,
    status: {
      uid: "u1",
      name: "web",
      namespace: "default",
      sandboxes: [],
      containers: all.map((c) => makeContainerView(c)),
    },
  });
  for (let t = 0; t < advanceMs; t += 500) await clock.advance(500);
  const results = await done;
  return {
    results,
    stops: log.map((s) => ({ ...s, at: s.at - start })),
    hooks: hooks.map((h) => ({ ...h, at: h.at - start })),
  };
}

Deno.test("killPod() stops regular containers first, then sidecars last-declared first", async () => {
  const hook = { preStop: { exec: { command: ["true"] } } };
  const pod = podOf(
    [sidecar("s1", { lifecycle: hook }), sidecar("s2", { lifecycle: hook })],
    [plain("a"), plain("b")],
  );
  const { stops, hooks, results } = await runKill(pod, 3_000, 12_000);
  assert.deepEqual(results.map((r) => r.reason), [
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
  assert.deepEqual(stops.map((s) => [s.name, s.at]), [
    ["a", 0],
    ["b", 0],
    ["s2", 3_000],
    ["s1", 6_000],
  ]);
  // every preStop hook starts at once, as upstream's killContainer runs it before its turn
  assert.deepEqual(hooks.map((h) => h.at), [0, 0]);
  // what is left of the grace period after the wait, in whole seconds
  assert.deepEqual(stops.map((s) => s.timeout), [30n, 30n, 27n, 24n]);
});

Deno.test("killPod() stops a sidecar when the grace period runs out, whatever it waits for", async () => {
  // the regular container takes 20 s to stop, the grace period is 5 s
  const pod = podOf([sidecar("s1")], [plain("a")], 5);
  const { stops } = await runKill(pod, 20_000, 25_000);
  assert.deepEqual(stops.map((s) => [s.name, s.at, s.timeout]), [
    ["a", 0, 5n],
    ["s1", 5_000, 2n],
  ]);
});

Deno.test("killPod() stops containers of a pod without sidecars together", async () => {
  const pod = podOf([], [plain("a"), plain("b")]);
  const { stops } = await runKill(pod, 3_000, 3_000);
  assert.deepEqual(stops.map((s) => [s.name, s.at]), [["a", 0], ["b", 0]]);
});
