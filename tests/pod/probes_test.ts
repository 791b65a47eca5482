import assert from "node:assert/strict";
import type { PodStatus, Probe } from "../../src/pod/mod.ts";
import { type Harness, NODE, startHarness } from "./_harness.ts";

function probedPod(
  name: string,
  probes: {
    livenessProbe?: Probe;
    readinessProbe?: Probe;
    startupProbe?: Probe;
  },
): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 2,
      containers: [{
        name: "app",
        image: "kts.local/busybox:latest",
        imagePullPolicy: "IfNotPresent",
        command: ["sleep", "3600"],
        ...probes,
      }],
    },
  });
}

function status(h: Harness, name: string): PodStatus | undefined {
  return h.statusManager.allStatuses().find((e) =>
    e.podFullName === `default/${name}-${NODE}`
  )?.status;
}

function readyCondition(h: Harness, name: string): string | undefined {
  return status(h, name)?.conditions?.find((c) => c.type === "Ready")?.status;
}

/** Ticks 1 s at a time until `check` holds; fails after `maxMs` of fake time. */
async function tickUntil(
  h: Harness,
  what: string,
  check: () => boolean | Promise<boolean>,
  maxMs = 60_000,
): Promise<number> {
  for (let t = 0; t <= maxMs; t += 1000) {
    if (await check()) return t;
    await h.tick(1000);
  }
  throw new Error(`Timed out waiting for ${what}`);
}

const CHECK = ["cat", "/tmp/healthy"];

Deno.test("a failing liveness exec probe gets the container restarted", async () => {
  await using h = await startHarness({
    manifests: {
      "live.yaml": probedPod("live", {
        livenessProbe: {
          exec: { command: CHECK },
          periodSeconds: 1,
          failureThreshold: 2,
        },
      }),
    },
    scenario: {
      containers: {
        app: { exec: [{ command: CHECK, exitCode: 1, stderr: "no file" }] },
      },
    },
  });
  await h.settle();
  const [first] = await h.containers("live");
  assert.equal(first?.state, "running");
  await tickUntil(
    h,
    "a restart",
    () => (status(h, "live")?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
    30_000,
  );
  const all = await h.containers("live");
  assert.ok(all.length >= 2, `instances: ${all.length}`);
  assert.equal(
    all.find((c) => c.id === first!.id)?.state ?? "exited",
    "exited",
  );
  const failed = h.logger.records.find((r) =>
    r.msg === "Probe failed" && r.fields.probeType === "Liveness"
  );
  assert.equal(failed?.fields.output, "no file");
  const kill = h.logger.records.find((r) =>
    r.msg === "Killing container with a grace period"
  );
  assert.match(String(kill?.fields.reason), /failed liveness probe/);
});

Deno.test("a readiness probe toggles the pod's Ready condition", async () => {
  const scenario = {
    containers: { app: { exec: [{ command: CHECK, exitCode: 1 }] } },
  };
  await using h = await startHarness({
    manifests: {
      "ready.yaml": probedPod("ready", {
        readinessProbe: {
          exec: { command: CHECK },
          periodSeconds: 2,
          failureThreshold: 1,
        },
      }),
    },
    scenario,
  });
  await h.settle();
  await h.tick(5000);
  assert.equal(status(h, "ready")?.phase, "Running");
  assert.equal(readyCondition(h, "ready"), "False");
  assert.equal(status(h, "ready")?.containerStatuses?.[0]?.ready, false);

  const [c] = await h.containers("ready");
  const behavior = h.runtime.containers.get(c!.id)!.behavior;
  behavior.exec![0]!.exitCode = 0;
  await tickUntil(h, "Ready=True", () => readyCondition(h, "ready") === "True");
  assert.equal(status(h, "ready")?.containerStatuses?.[0]?.ready, true);

  behavior.exec![0]!.exitCode = 1;
  await tickUntil(
    h,
    "Ready=False",
    () => readyCondition(h, "ready") === "False",
  );
  const [still] = await h.containers("ready");
  assert.equal(still?.id, c!.id, "readiness failures do not restart");
});

Deno.test("a startup probe delays liveness until it succeeds", async () => {
  await using h = await startHarness({
    manifests: {
      "slow.yaml": probedPod("slow", {
        startupProbe: {
          exec: { command: ["cat", "/tmp/started"] },
          periodSeconds: 1,
          failureThreshold: 30,
        },
        livenessProbe: {
          exec: { command: CHECK },
          periodSeconds: 1,
          failureThreshold: 1,
        },
      }),
    },
    scenario: {
      containers: {
        app: {
          exec: [
            { command: ["cat", "/tmp/started"], exitCode: 1 },
            { command: CHECK, exitCode: 1 },
          ],
        },
      },
    },
  });
  await h.settle();
  await h.tick(10_000);
  const [c] = await h.containers("slow");
  assert.equal(c?.state, "running", "a failing liveness probe is not run yet");
  assert.equal(status(h, "slow")?.containerStatuses?.[0]?.started, false);
  const livenessRuns = () =>
    h.logger.records.filter((r) =>
      r.msg === "Probe failed" && r.fields.probeType === "Liveness"
    ).length;
  assert.equal(livenessRuns(), 0);
  assert.ok(
    h.logger.records.some((r) =>
      r.msg === "Probe failed" && r.fields.probeType === "Startup"
    ),
  );

  h.runtime.containers.get(c!.id)!.behavior.exec![0]!.exitCode = 0;
  await tickUntil(h, "the liveness kill", async () => {
    const [now] = await h.containers("slow");
    return now?.state !== "running" || now.id !== c!.id;
  });
  assert.ok(livenessRuns() >= 1);
});

Deno.test("probe workers stop with the pod and leave no results behind", async () => {
  await using h = await startHarness({
    manifests: {
      "gone.yaml": probedPod("gone", {
        readinessProbe: { exec: { command: ["true"] }, periodSeconds: 1 },
      }),
    },
  });
  await h.settle();
  await tickUntil(h, "Ready=True", () => readyCondition(h, "gone") === "True");
  assert.equal(h.probeResults.readiness.size, 1);
  await h.remove("gone.yaml");
  await h.settle();
  await h.tick(3000);
  assert.equal(h.probeResults.readiness.size, 0);
});
