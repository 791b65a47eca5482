import assert from "node:assert/strict";
import { RecordedEvents } from "../../events/testing.ts";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { ProbeOutcome } from "./probe_handlers.ts";
import {
  createProbeResults,
  type ProbeResultChange,
  type ProbeResults,
  type ProbeType,
} from "./probe_results.ts";
import { normalizeProbe, ProbeWorker } from "./probe_worker.ts";
import type { Container, Pod, PodStatus, Probe } from "../types.ts";

const START = Date.UTC(2026, 0, 1);

interface Setup {
  worker: ProbeWorker;
  clock: FakeClock;
  results: ProbeResults;
  changes: ProbeResultChange[];
  calls: string[];
  logger: CaptureLogger;
  /** Outcomes the fake probe returns, in order (then "success"). */
  outcomes: ProbeOutcome["result"][];
  status: { value: PodStatus | undefined };
  events: RecordedEvents;
  signal: AbortSignal;
}

function statusWith(
  id: string,
  state: "running" | "exited",
  options: { started?: boolean; startedAt?: number } = {},
): PodStatus {
  const startedAt = new Date(options.startedAt ?? START).toISOString();
  return {
    phase: "Running",
    podIP: "10.0.0.5",
    containerStatuses: [{
      name: "app",
      state: state === "running"
        ? { running: { startedAt } }
        : { terminated: { exitCode: 1 } },
      lastState: {},
      ready: false,
      started: options.started ?? true,
      restartCount: 0,
      image: "img",
      imageID: "",
      containerID: `containerd://${id}`,
    }],
  };
}

function setup(
  probeType: ProbeType,
  probe: Probe,
  pod: Partial<Pod["spec"]> = {},
): Setup {
  const clock = new FakeClock(START);
  const results = createProbeResults();
  const changes: ProbeResultChange[] = [];
  const calls: string[] = [];
  const logger = new CaptureLogger();
  const outcomes: ProbeOutcome["result"][] = [];
  const status: { value: PodStatus | undefined } = {
    value: statusWith("c1", "running"),
  };
  const key = `${probeType}Probe` as const;
  const container: Container = { name: "app", image: "img", [key]: probe };
  const events = new RecordedEvents();
  const worker = new ProbeWorker({
    runtime: { execSync: () => Promise.reject(new Error("unused")) },
    clock,
    logger,
    events,
    results,
    statuses: { getPodStatus: () => status.value },
    onChange: (c) => void changes.push(c),
    probe: (_probe, target) => {
      calls.push(target.containerId);
      const result = outcomes.shift() ?? "success";
      return Promise.resolve({
        result,
        output: `out-${result}`,
        ...(result === "unknown" ? { warning: "needs --allow-net=x" } : {}),
      });
    },
  }, {
    pod: {
      metadata: { name: "web", namespace: "default", uid: "u1" },
      spec: { containers: [container], ...pod },
    },
    container,
    probeType,
  });
  return {
    worker,
    clock,
    results,
    changes,
    calls,
    logger,
    outcomes,
    status,
    events,
    signal: new AbortController().signal,
  };
}

async function probeTimes(s: Setup, n: number): Promise<boolean[]> {
  const out: boolean[] = [];
  for (let i = 0; i < n; i++) out.push(await s.worker.doProbe(s.signal));
  return out;
}

Deno.test("normalizeProbe() applies API defaults and forces successThreshold 1 for liveness and startup", () => {
  assert.deepEqual(normalizeProbe({}, "readiness"), {
    initialDelaySeconds: 0,
    periodSeconds: 10,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 3,
  });
  assert.equal(
    normalizeProbe({ successThreshold: 3 }, "liveness").successThreshold,
    1,
  );
  assert.equal(
    normalizeProbe({ successThreshold: 3 }, "startup").successThreshold,
    1,
  );
  assert.equal(
    normalizeProbe({ successThreshold: 3 }, "readiness").successThreshold,
    3,
  );
  assert.equal(
    normalizeProbe({ periodSeconds: -5 }, "liveness").periodSeconds,
    1,
  );
});

Deno.test("ProbeWorker.doProbe() publishes initial results for a new container", async () => {
  for (
    const [type, expected] of [
      ["liveness", "success"],
      ["startup", "unknown"],
    ] as const
  ) {
    const s = setup(type, { exec: { command: ["true"] } }, {});
    s.status.value = statusWith("c1", "running", { started: false });
    if (type === "liveness") {
      s.status.value.containerStatuses![0]!.started = true;
    }
    s.outcomes.push("unknown");
    await s.worker.doProbe(s.signal);
    assert.equal(s.results[type].get("c1"), expected, type);
    assert.deepEqual(s.changes, [], "the initial result is not a change");
  }
  const r = setup("readiness", { exec: { command: ["true"] } });
  r.outcomes.push("failure");
  await r.worker.doProbe(r.signal);
  assert.equal(r.results.readiness.get("c1"), false);
});

Deno.test("ProbeWorker.doProbe() flips readiness only after successThreshold successes", async () => {
  const s = setup("readiness", { successThreshold: 2, failureThreshold: 2 });
  s.outcomes.push("success", "failure", "success", "success");
  await probeTimes(s, 3);
  assert.equal(s.results.readiness.get("c1"), false);
  await probeTimes(s, 1);
  assert.equal(s.results.readiness.get("c1"), true);
  s.outcomes.push("failure");
  await probeTimes(s, 1);
  assert.equal(s.results.readiness.get("c1"), true, "one failure < threshold");
  s.outcomes.push("failure");
  await probeTimes(s, 1);
  assert.equal(s.results.readiness.get("c1"), false);
  assert.deepEqual(s.changes.map((c) => `${c.probeType} ${c.result}`), [
    "readiness success",
    "readiness failure",
  ]);
});

Deno.test("ProbeWorker.doProbe() publishes a liveness failure after failureThreshold consecutive failures, then holds", async () => {
  const s = setup("liveness", { failureThreshold: 3 });
  s.outcomes.push("failure", "failure", "success", "failure", "failure");
  await probeTimes(s, 5);
  assert.equal(s.results.liveness.get("c1"), "success", "streak was broken");
  s.outcomes.push("failure");
  await probeTimes(s, 1);
  assert.equal(s.results.liveness.get("c1"), "failure");
  assert.deepEqual(s.changes, [{
    podUid: "u1",
    containerName: "app",
    containerId: "c1",
    probeType: "liveness",
    result: "failure",
  }]);
  const before = s.calls.length;
  await probeTimes(s, 3);
  assert.equal(s.calls.length, before, "on hold until the container changes");
  const failed = s.logger.records.filter((r) => r.msg === "Probe failed");
  assert.equal(failed.length, 5);
  assert.equal(failed[0]!.verbosity, 1);
  assert.equal(failed[0]!.fields.probeType, "Liveness");
  assert.equal(failed[0]!.fields.output, "out-failure");
});

Deno.test("ProbeWorker.doProbe() resets counters and results when the container id changes", async () => {
  const s = setup("liveness", { failureThreshold: 2 });
  s.outcomes.push("failure", "failure");
  await probeTimes(s, 2);
  assert.equal(s.results.liveness.get("c1"), "failure");
  s.status.value = statusWith("c2", "running");
  s.outcomes.push("failure");
  await probeTimes(s, 1);
  assert.equal(s.results.liveness.has("c1"), false, "old id forgotten");
  assert.equal(s.results.liveness.get("c2"), "success", "one failure < 2");
  assert.deepEqual(s.calls, ["c1", "c1", "c2"]);
});

Deno.test("ProbeWorker.doProbe() waits initialDelaySeconds after the container started", async () => {
  const s = setup("readiness", { initialDelaySeconds: 5 });
  await probeTimes(s, 1);
  await s.clock.advance(4999);
  await probeTimes(s, 1);
  assert.deepEqual(s.calls, []);
  await s.clock.advance(1);
  await probeTimes(s, 1);
  assert.deepEqual(s.calls, ["c1"]);
  assert.equal(s.results.readiness.get("c1"), true);
});

Deno.test("ProbeWorker.doProbe() runs liveness only after the container started and startup only before", async () => {
  const live = setup("liveness", {});
  live.status.value = statusWith("c1", "running", { started: false });
  await probeTimes(live, 2);
  assert.deepEqual(live.calls, []);
  live.status.value = statusWith("c1", "running", { started: true });
  await probeTimes(live, 1);
  assert.deepEqual(live.calls, ["c1"]);

  const startup = setup("startup", {});
  startup.status.value = statusWith("c1", "running", { started: false });
  await probeTimes(startup, 1);
  assert.equal(startup.results.startup.get("c1"), "success");
  startup.status.value = statusWith("c1", "running", { started: true });
  await probeTimes(startup, 2);
  assert.deepEqual(startup.calls, ["c1"]);
});

Deno.test("ProbeWorker.doProbe() does not probe a container that is not running", async () => {
  const s = setup("readiness", {});
  s.status.value = statusWith("c1", "exited");
  assert.deepEqual(await probeTimes(s, 1), [true]);
  assert.deepEqual(s.calls, []);
  assert.equal(s.results.readiness.get("c1"), false);

  const never = setup("liveness", {}, { restartPolicy: "Never" });
  never.status.value = statusWith("c1", "exited");
  assert.deepEqual(await probeTimes(never, 1), [false], "nothing to restart");
  assert.equal(never.results.liveness.get("c1"), "failure");
});

Deno.test("ProbeWorker.doProbe() throws unknown outcomes away and warns once", async () => {
  const s = setup("liveness", { failureThreshold: 2 });
  s.outcomes.push("failure", "unknown", "unknown", "failure");
  await probeTimes(s, 3);
  assert.equal(s.results.liveness.get("c1"), "success");
  const warnings = s.logger.records.filter((r) => r.severity === "warn");
  assert.deepEqual(warnings.map((w) => w.msg), ["needs --allow-net=x"]);
  await probeTimes(s, 1);
  assert.equal(s.results.liveness.get("c1"), "failure");
  // Every failed or errored attempt is an Unhealthy event on the container.
  assert.deepEqual(s.events.lines(), [
    "Unhealthy: Liveness probe failed: out-failure",
    "Unhealthy: Liveness probe errored and resulted in unknown state: out-unknown",
    "Unhealthy: Liveness probe failed: out-failure",
  ]);
  assert.equal(s.events.events[0]!.object.fieldPath, "spec.containers{app}");
});

Deno.test("ProbeWorker.doProbe() waits for a status and a container id, and stops for a terminal pod", async () => {
  const s = setup("readiness", {});
  s.status.value = undefined;
  assert.deepEqual(await probeTimes(s, 1), [true]);
  s.status.value = { phase: "Pending", containerStatuses: [] };
  assert.deepEqual(await probeTimes(s, 1), [true]);
  s.status.value = { phase: "Succeeded" };
  assert.deepEqual(await probeTimes(s, 1), [false]);
  assert.deepEqual(s.calls, []);
});

Deno.test("ProbeWorker.run() ticks every periodSeconds and removes its result when aborted", async () => {
  const s = setup("readiness", { periodSeconds: 3 });
  const controller = new AbortController();
  const done = s.worker.run(controller.signal);
  await s.clock.advance(0);
  assert.equal(s.calls.length, 1);
  await s.clock.advance(2999);
  assert.equal(s.calls.length, 1);
  await s.clock.advance(1);
  assert.equal(s.calls.length, 2);
  await s.clock.advance(6000);
  assert.equal(s.calls.length, 4);
  assert.equal(s.results.readiness.get("c1"), true);
  controller.abort();
  await done;
  assert.equal(s.results.readiness.has("c1"), false);
  assert.equal(s.clock.pendingSleeps, 0);
});

Deno.test("ProbeWorker.doProbe() keeps probing after a readiness failure so readiness can recover", async () => {
  // upstream worker.doProbe puts only liveness and startup failures on hold (the container is
  // about to restart); a not-ready container stays and must be able to become ready again
  const s = setup("readiness", { failureThreshold: 1 });
  s.outcomes.push("success", "failure", "failure");
  await probeTimes(s, 2);
  assert.equal(s.results.readiness.get("c1"), false);
  const results: (boolean | undefined)[] = [];
  for (let i = 0; i < 2; i++) {
    await probeTimes(s, 1);
    results.push(s.results.readiness.get("c1"));
  }
  assert.deepEqual(results, [false, true], "probed again with the same id");
  assert.deepEqual(s.calls, ["c1", "c1", "c1", "c1"]);
  assert.deepEqual(s.changes.map((c) => `${c.probeType} ${c.result}`), [
    "readiness success",
    "readiness failure",
    "readiness success",
  ]);
});

Deno.test("ProbeWorker.doProbe() records a ProbeWarning on every non-local redirect and keeps the container healthy", async () => {
  // upstream prober.probe: probe.Warning records "<Type> probe warning: <output>" on each
  // attempt and counts as success; repeats are folded by the event correlator
  const body = '<a href="http://0.0.0.0/">Found</a>.\n\n';
  const urls: string[] = [];
  const clock = new FakeClock(START);
  const results = createProbeResults();
  const changes: ProbeResultChange[] = [];
  const events = new RecordedEvents();
  const container: Container = {
    name: "app",
    image: "img",
    livenessProbe: {
      httpGet: { path: "/redirect?loc=http%3A%2F%2F0.0.0.0%2F", port: 8080 },
      failureThreshold: 1,
    },
  };
  const worker = new ProbeWorker({
    runtime: { execSync: () => Promise.reject(new Error("unused")) },
    clock,
    logger: new CaptureLogger(),
    events,
    results,
    statuses: { getPodStatus: () => statusWith("c1", "running") },
    onChange: (c) => void changes.push(c),
    fetch: (input) => {
      urls.push(String(input));
      return Promise.resolve(
        new Response(body, {
          status: 302,
          headers: { location: "http://0.0.0.0/" },
        }),
      );
    },
  }, {
    pod: {
      metadata: { name: "web", namespace: "default", uid: "u1" },
      spec: { containers: [container] },
    },
    container,
    probeType: "liveness",
  });
  const signal = new AbortController().signal;
  for (let i = 0; i < 3; i++) assert.equal(await worker.doProbe(signal), true);
  assert.equal(results.liveness.get("c1"), "success");
  assert.deepEqual(changes, [], "never published a failure");
  assert.deepEqual(
    events.events.map((e) => [e.type, e.reason, e.message]),
    Array(3).fill([
      "Warning",
      "ProbeWarning",
      `Liveness probe warning: Probe terminated redirects, Response body: ${body}`,
    ]),
  );
  assert.equal(events.events[0]!.object.fieldPath, "spec.containers{app}");
  assert.ok(
    urls.every((u) => u.startsWith("http://10.0.0.5:8080/")),
    "the other host is never contacted",
  );
});
