import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createPodStatusManager } from "../../status/mod.ts";
import { createProber } from "./prober.ts";
import { createProbeResults, type ProbeResultChange } from "./probe_results.ts";
import type { Pod, PodStatus } from "../types.ts";

function pod(uid: string): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: "default", uid },
    spec: {
      initContainers: [
        {
          name: "sidecar",
          image: "i",
          restartPolicy: "Always",
          readinessProbe: { exec: { command: ["true"] } },
        },
        {
          name: "init",
          image: "i",
          readinessProbe: { exec: { command: ["true"] } },
        },
      ],
      containers: [{
        name: "app",
        image: "i",
        livenessProbe: { exec: { command: ["true"] }, periodSeconds: 5 },
        readinessProbe: { exec: { command: ["true"] }, periodSeconds: 5 },
      }, { name: "plain", image: "i" }],
    },
  };
}

function running(id: string, phase: PodStatus["phase"] = "Running"): PodStatus {
  return {
    phase,
    containerStatuses: [{
      name: "app",
      state: { running: { startedAt: "2026-01-01T00:00:00Z" } },
      lastState: {},
      ready: false,
      started: true,
      restartCount: 0,
      image: "i",
      imageID: "",
      containerID: `containerd://${id}`,
    }],
  };
}

function setup() {
  const clock = new FakeClock();
  const statuses = createPodStatusManager();
  const results = createProbeResults();
  const changes: ProbeResultChange[] = [];
  const execs: string[] = [];
  let exitCode = 0;
  const prober = createProber({
    runtime: {
      execSync: (request) => {
        execs.push(request.containerId ?? "");
        return Promise.resolve({
          stdout: new Uint8Array(),
          stderr: new Uint8Array(),
          exitCode,
        } as never);
      },
    },
    statuses,
    results,
    clock,
    logger: new CaptureLogger(),
  }, { onResult: (c) => void changes.push(c), random: () => 0 });
  return {
    clock,
    statuses,
    results,
    changes,
    execs,
    prober,
    fail: () => exitCode = 1,
  };
}

Deno.test("createProber() starts one worker per declared probe of containers and sidecars", async () => {
  const s = setup();
  await using prober = s.prober;
  const controller = new AbortController();
  prober.start(controller.signal);
  s.statuses.setPodStatus(pod("u1"), { phase: "Pending" });
  assert.equal(prober.workerCount, 3, "app liveness+readiness, sidecar");
  s.statuses.setPodStatus(pod("u1"), running("c1"));
  assert.equal(prober.workerCount, 3, "existing workers are kept");
  await s.clock.advance(0);
  assert.deepEqual(s.execs, ["c1", "c1"], "first probes right away");
  await s.clock.advance(4999);
  assert.equal(s.execs.length, 2);
  await s.clock.advance(1);
  assert.equal(s.execs.length, 4, "then every periodSeconds");
  assert.equal(s.results.readiness.get("c1"), true);
  assert.equal(s.results.liveness.get("c1"), "success");
  assert.deepEqual(s.changes.map((c) => `${c.probeType} ${c.result}`), [
    "readiness success",
  ]);
});

Deno.test("createProber() reports liveness failures through onResult", async () => {
  const s = setup();
  await using prober = s.prober;
  prober.start(new AbortController().signal);
  s.statuses.setPodStatus(pod("u1"), running("c1"));
  s.fail();
  await s.clock.advance(15_000);
  assert.equal(s.results.liveness.get("c1"), "failure");
  assert.deepEqual(
    s.changes.filter((c) => c.probeType === "liveness"),
    [{
      podUid: "u1",
      containerName: "app",
      containerId: "c1",
      probeType: "liveness",
      result: "failure",
    }],
  );
});

Deno.test("createProber() stops a pod's workers on a terminal phase or a removed status", async () => {
  const s = setup();
  await using prober = s.prober;
  prober.start(new AbortController().signal);
  s.statuses.setPodStatus(pod("u1"), running("c1"));
  s.statuses.setPodStatus(pod("u2"), running("c2"));
  await s.clock.advance(0);
  assert.equal(prober.workerCount, 6);
  s.statuses.setPodStatus(pod("u1"), running("c1", "Succeeded"));
  s.statuses.removePod("u2");
  await s.clock.advance(0);
  assert.equal(prober.workerCount, 0);
  assert.equal(s.results.readiness.size, 0);
  assert.equal(s.results.liveness.size, 0);
  assert.equal(s.clock.pendingSleeps, 0);
});

Deno.test("Prober.stop() aborts every worker, unsubscribes and is safe twice", async () => {
  const s = setup();
  const controller = new AbortController();
  s.prober.start(controller.signal);
  s.statuses.setPodStatus(pod("u1"), running("c1"));
  await s.clock.advance(0);
  await s.prober.stop();
  await s.prober.stop();
  assert.equal(s.prober.workerCount, 0);
  assert.equal(s.clock.pendingSleeps, 0);
  s.statuses.setPodStatus(pod("u3"), running("c3"));
  assert.equal(s.prober.workerCount, 0, "no workers after stop");
});

Deno.test("createProber() stops when the start signal aborts", async () => {
  const s = setup();
  const controller = new AbortController();
  s.prober.start(controller.signal);
  s.statuses.setPodStatus(pod("u1"), running("c1"));
  controller.abort();
  await s.prober.stop();
  assert.equal(s.clock.pendingSleeps, 0);
  assert.equal(s.prober.workerCount, 0);
});

Deno.test("Prober.stopLivenessAndStartup() keeps readiness and does not restart liveness on later statuses", async () => {
  const s = setup();
  await using prober = s.prober;
  prober.start(new AbortController().signal);
  s.statuses.setPodStatus(pod("u1"), running("c1"));
  await s.clock.advance(0);
  assert.equal(prober.workerCount, 3);
  await prober.stopLivenessAndStartup("u1");
  assert.equal(prober.workerCount, 2, "app and sidecar readiness remain");
  assert.equal(s.results.liveness.has("c1"), false);
  s.statuses.setPodStatus(pod("u1"), running("c2"));
  assert.equal(prober.workerCount, 2, "no liveness worker while terminating");
  await prober.removePod("u1");
  assert.equal(prober.workerCount, 0);
});
