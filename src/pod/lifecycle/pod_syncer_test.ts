import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createSimRuntime, type SimScenario } from "../../runtime/sim/mod.ts";
import { createPodStatusManager } from "../../status/mod.ts";
import { containerHashString } from "../containers/container_hash.ts";
import { createPodSyncer } from "./pod_syncer.ts";
import type { ServiceLister } from "../env/service_env.ts";
import type { Container, Pod, PodWork } from "../types.ts";

function setup(scenario: SimScenario = {}, services?: ServiceLister) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock, scenario });
  const statusManager = createPodStatusManager();
  const dirs: string[] = [];
  const syncer = createPodSyncer(
    {
      runtime,
      images: runtime,
      clock,
      logger: new CaptureLogger(),
      statusManager,
      ...(services ? { services } : {}),
      mkdir: (path) => {
        dirs.push(path);
        return Promise.resolve();
      },
    },
    {
      podLogsDir: "/var/log/pods",
      serializeImagePulls: true,
      nodeName: "node-a",
      hostIPs: ["192.168.0.10"],
    },
  );
  const signal = new AbortController().signal;
  return { clock, runtime, statusManager, syncer, dirs, signal };
}

function pod(spec: Partial<Pod["spec"]> & { containers: Container[] }): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: { terminationGracePeriodSeconds: 30, ...spec },
  };
}

function work(p: Pod, extra: Partial<PodWork> = {}): PodWork {
  return { pod: p, updateType: "sync", ...extra };
}

function live(runtime: ReturnType<typeof createSimRuntime>) {
  return [...runtime.containers.values()].map((c) =>
    `${c.metadata.name}#${c.metadata.attempt}`
  );
}

Deno.test("syncPod() starts a new pod and reports it Running and Ready", async () => {
  const { runtime, statusManager, syncer, dirs, signal } = setup();
  const p = pod({
    containers: [{ name: "app", image: "nginx:1.27" }, {
      name: "log",
      image: "busybox:1.36",
    }],
  });
  const out = await syncer.syncPod(work(p), signal);
  assert.deepEqual(out, { terminal: false });
  assert.equal(runtime.sandboxes.size, 1);
  assert.deepEqual(live(runtime).sort(), ["app#0", "log#0"]);
  assert.ok(
    [...runtime.containers.values()].every((c) => c.state === "running"),
  );
  assert.deepEqual(dirs, [
    "/var/log/pods/default_web_u1",
    "/var/log/pods/default_web_u1/app",
    "/var/log/pods/default_web_u1/log",
  ]);
  const status = statusManager.getPodStatus("u1")!;
  assert.equal(status.phase, "Running");
  assert.match(status.podIP ?? "", /^\d+\.\d+\.\d+\.\d+$/);
  assert.equal(status.hostIP, "192.168.0.10");
  assert.deepEqual(
    status.containerStatuses?.map((c) => [c.name, c.ready, c.restartCount]),
    [
      ["app", true, 0],
      ["log", true, 0],
    ],
  );
  const ready = status.conditions?.find((c) => c.type === "Ready");
  assert.equal(ready?.status, "True");
  const app = [...runtime.containers.values()].find((c) =>
    c.metadata.name === "app"
  )!;
  assert.equal(
    status.containerStatuses?.[0]?.containerID,
    `kubelet.ts-sim://${app.id}`,
  );
});

Deno.test("syncPod() is idempotent for a healthy pod", async () => {
  const { runtime, syncer, signal } = setup();
  const p = pod({ containers: [{ name: "app", image: "nginx:1.27" }] });
  await syncer.syncPod(work(p), signal);
  const callsAfterFirst =
    runtime.calls.filter((c) =>
      c === "createContainer" || c === "runPodSandbox"
    ).length;
  await syncer.syncPod(work(p), signal);
  await syncer.syncPod(work(p), signal);
  const callsAfterThird =
    runtime.calls.filter((c) =>
      c === "createContainer" || c === "runPodSandbox"
    ).length;
  assert.equal(callsAfterThird, callsAfterFirst);
  assert.equal(runtime.containers.size, 1);
});

Deno.test("syncPod() backs off a crash-looping container with growing delays", async () => {
  const { clock, statusManager, syncer, signal } = setup({
    containers: { app: { exitAfterMs: 1_000, exitCode: 1 } },
  });
  const p = pod({ containers: [{ name: "app", image: "busybox:1.36" }] });
  const waiting = () =>
    statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state.waiting;

  await syncer.syncPod(work(p), signal); // start #0
  await clock.advance(1_000); // #0 exits
  await syncer.syncPod(work(p), signal); // first restart is immediate (#1), window 10s
  assert.equal(
    statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.restartCount,
    1,
  );
  await clock.advance(1_000); // #1 exits

  const blocked = await syncer.syncPod(work(p), signal);
  assert.equal(waiting()?.reason, "CrashLoopBackOff");
  assert.equal(
    waiting()?.message,
    "back-off 10s restarting failed container=app pod=web_default(u1)",
  );
  assert.equal(blocked.retryAfterMs, 10_000);
  const last = statusManager.getPodStatus("u1")?.containerStatuses?.[0]
    ?.lastState.terminated;
  assert.equal(last?.exitCode, 1);
  assert.equal(statusManager.getPodStatus("u1")?.phase, "Running");

  await clock.advance(9_999);
  await syncer.syncPod(work(p), signal);
  assert.equal(
    waiting()?.reason,
    "CrashLoopBackOff",
    "still inside the 10s window",
  );
  await clock.advance(1);
  await syncer.syncPod(work(p), signal); // restart #2, window 20s
  assert.equal(
    statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.restartCount,
    2,
  );
  assert.ok(
    statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state.running,
  );

  await clock.advance(1_000);
  const again = await syncer.syncPod(work(p), signal);
  assert.equal(
    waiting()?.message,
    "back-off 20s restarting failed container=app pod=web_default(u1)",
  );
  assert.equal(again.retryAfterMs, 20_000);
});

Deno.test("syncPod() finishes a Never pod: Succeeded on exit 0, Failed otherwise", async () => {
  for (const [code, phase] of [[0, "Succeeded"], [3, "Failed"]] as const) {
    const { clock, runtime, statusManager, syncer, signal } = setup({
      containers: { app: { exitAfterMs: 500, exitCode: code } },
    });
    const p = pod({
      restartPolicy: "Never",
      containers: [{ name: "app", image: "busybox:1.36" }],
    });
    assert.equal((await syncer.syncPod(work(p), signal)).terminal, false);
    await clock.advance(500);
    assert.equal((await syncer.syncPod(work(p), signal)).terminal, true);
    assert.equal(statusManager.getPodStatus("u1")?.phase, phase);
    assert.equal(runtime.containers.size, 1, "never restarted");
    const term = statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state
      .terminated;
    assert.equal(term?.exitCode, code);
    assert.equal(term?.reason, code === 0 ? "Completed" : "Error");
  }
});

Deno.test("syncPod() restarts only failures with OnFailure", async () => {
  const { clock, runtime, statusManager, syncer, signal } = setup({
    containers: {
      ok: { exitAfterMs: 100, exitCode: 0 },
      bad: { exitAfterMs: 100, exitCode: 2 },
    },
  });
  const p = pod({
    restartPolicy: "OnFailure",
    containers: [{ name: "ok", image: "busybox:1.36" }, {
      name: "bad",
      image: "busybox:1.36",
    }],
  });
  await syncer.syncPod(work(p), signal);
  await clock.advance(100);
  const out = await syncer.syncPod(work(p), signal);
  assert.equal(out.terminal, false);
  assert.deepEqual(live(runtime).sort(), ["bad#0", "bad#1", "ok#0"]);
  assert.equal(statusManager.getPodStatus("u1")?.phase, "Running");
});

Deno.test("syncPod() runs init containers one at a time, in order, before app containers", async () => {
  const { clock, runtime, statusManager, syncer, signal } = setup({
    containers: { init1: { exitAfterMs: 100 }, init2: { exitAfterMs: 100 } },
  });
  const p = pod({
    initContainers: [{ name: "init1", image: "busybox:1.36" }, {
      name: "init2",
      image: "busybox:1.36",
    }],
    containers: [{ name: "app", image: "nginx:1.27" }],
  });
  await syncer.syncPod(work(p), signal);
  assert.deepEqual(live(runtime), ["init1#0"]);
  let status = statusManager.getPodStatus("u1")!;
  assert.equal(status.phase, "Pending");
  assert.equal(
    status.containerStatuses?.[0]?.state.waiting?.reason,
    "PodInitializing",
  );
  assert.equal(
    status.conditions?.find((c) => c.type === "Initialized")?.status,
    "False",
  );

  await syncer.syncPod(work(p), signal);
  assert.deepEqual(live(runtime), ["init1#0"], "waits while init1 runs");
  await clock.advance(100);
  await syncer.syncPod(work(p), signal);
  assert.deepEqual(live(runtime), ["init1#0", "init2#0"]);
  await clock.advance(100);
  await syncer.syncPod(work(p), signal);
  assert.deepEqual(live(runtime), ["init1#0", "init2#0", "app#0"]);
  status = statusManager.getPodStatus("u1")!;
  assert.equal(status.phase, "Running");
  assert.equal(
    status.conditions?.find((c) => c.type === "Initialized")?.status,
    "True",
  );
  assert.deepEqual(
    status.initContainerStatuses?.map((s) => s.state.terminated?.reason),
    ["Completed", "Completed"],
  );
});

Deno.test("syncPod() fails a Never pod whose init container fails", async () => {
  const { clock, runtime, statusManager, syncer, signal } = setup({
    containers: { init1: { exitAfterMs: 100, exitCode: 1 } },
  });
  const p = pod({
    restartPolicy: "Never",
    initContainers: [{ name: "init1", image: "busybox:1.36" }],
    containers: [{ name: "app", image: "nginx:1.27" }],
  });
  await syncer.syncPod(work(p), signal);
  await clock.advance(100);
  const out = await syncer.syncPod(work(p), signal);
  assert.equal(out.terminal, true);
  assert.equal(statusManager.getPodStatus("u1")?.phase, "Failed");
  assert.deepEqual(
    live(runtime),
    ["init1#0"],
    "the app container never starts",
  );
});

Deno.test("syncPod() recreates a container whose image changed", async () => {
  const { runtime, syncer, signal, statusManager } = setup();
  const v1 = pod({ containers: [{ name: "app", image: "nginx:1.27" }] });
  await syncer.syncPod(work(v1), signal);
  const v2 = pod({ containers: [{ name: "app", image: "nginx:1.28" }] });
  await syncer.syncPod(work(v2), signal);
  const byAttempt = [...runtime.containers.values()].sort((a, b) =>
    a.metadata.attempt - b.metadata.attempt
  );
  assert.deepEqual(
    byAttempt.map((
      c,
    ) => [
      c.metadata.attempt,
      c.state,
      c.annotations["io.kubernetes.container.hash"] ===
        containerHashString(v2.spec.containers[0]!),
    ]),
    [
      [0, "exited", false],
      [1, "running", true],
    ],
  );
  assert.equal(
    statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.restartCount,
    1,
  );
});

Deno.test("syncTerminatingPod() gives SIGTERM-ignoring containers the full grace period", async () => {
  const { clock, runtime, statusManager, syncer, signal } = setup({
    containers: { app: { ignoreSigterm: true } },
  });
  const p = pod({
    terminationGracePeriodSeconds: 5,
    containers: [{ name: "app", image: "nginx:1.27" }],
  });
  await syncer.syncPod(work(p), signal);
  let done = false;
  const stopping = syncer.syncTerminatingPod(
    work(p, { updateType: "kill" }),
    signal,
  ).then(() => {
    done = true;
  });
  await clock.advance(4_999);
  assert.equal(done, false, "still inside the grace period");
  await clock.advance(1);
  await stopping;
  assert.equal(done, true);
  const c = [...runtime.containers.values()][0]!;
  assert.equal(c.state, "exited");
  assert.equal(c.exitCode, 137);
  assert.ok(
    [...runtime.sandboxes.values()].every((s) => s.state === "notready"),
  );
  const final = statusManager.getPodStatus("u1")!;
  assert.equal(final.containerStatuses?.[0]?.state.terminated?.exitCode, 137);
});

Deno.test("syncTerminatingPod() uses the worker's grace period override", async () => {
  const { clock, runtime, syncer, signal } = setup({
    containers: { app: { ignoreSigterm: true } },
  });
  const p = pod({
    terminationGracePeriodSeconds: 60,
    containers: [{ name: "app", image: "nginx:1.27" }],
  });
  await syncer.syncPod(work(p), signal);
  let done = false;
  const stopping = syncer.syncTerminatingPod(
    work(p, { gracePeriodSeconds: 3 }),
    signal,
  ).then(() => {
    done = true;
  });
  await clock.advance(2_999);
  assert.equal(done, false);
  await clock.advance(1);
  await stopping;
  assert.equal(done, true);
  assert.equal([...runtime.containers.values()][0]?.state, "exited");
});

Deno.test("syncTerminatingPod() stops a cooperative container at once with SIGTERM", async () => {
  const { runtime, syncer, signal } = setup();
  const p = pod({ containers: [{ name: "app", image: "nginx:1.27" }] });
  await syncer.syncPod(work(p), signal);
  await syncer.syncTerminatingPod(work(p), signal);
  assert.equal([...runtime.containers.values()][0]?.exitCode, 143);
});

Deno.test("syncTerminatedPod() keeps the exited containers, the sandbox and the final status", async () => {
  // upstream SyncTerminatedPod leaves a finished pod's content to container GC, which removes
  // it only once the pod is deleted: a restarted kubelet must still see it finished
  const { runtime, statusManager, syncer, signal } = setup();
  const p = pod({ containers: [{ name: "app", image: "nginx:1.27" }] });
  await syncer.syncPod(work(p), signal);
  await syncer.syncTerminatingPod(work(p), signal);
  const changes: string[] = [];
  statusManager.onChange((c) =>
    changes.push(c.kind === "set" ? `set ${c.entry.status.phase}` : c.kind)
  );
  const before = runtime.calls.length;
  await syncer.syncTerminatedPod(work(p), signal);
  await syncer.syncTerminatedPod(work(p), signal); // idempotent
  assert.equal(runtime.containers.size, 1);
  assert.equal([...runtime.containers.values()][0]?.state, "exited");
  assert.equal(runtime.sandboxes.size, 1);
  assert.deepEqual(
    runtime.calls.slice(before).filter((c) => c.startsWith("remove")),
    [],
  );
  assert.equal(statusManager.getPodStatus("u1")?.phase, "Failed");
  assert.deepEqual(
    changes,
    [],
    "the final status was already stored while terminating",
  );
});

Deno.test("syncPod() reports ErrImagePull, then ImagePullBackOff until the window passes", async () => {
  const { clock, runtime, statusManager, syncer, signal } = setup({
    images: {
      "example.com/broken:1": {
        pullFailures: -1,
        pullError: "manifest unknown",
      },
    },
  });
  const p = pod({
    containers: [{ name: "app", image: "example.com/broken:1" }],
  });
  const waiting = () =>
    statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state.waiting;
  const first = await syncer.syncPod(work(p), signal);
  assert.equal(waiting()?.reason, "ErrImagePull");
  assert.match(
    waiting()?.message ?? "",
    /Failed to pull image "example\.com\/broken:1": .*manifest unknown/,
  );
  assert.equal(first.retryAfterMs, 10_000);
  await syncer.syncPod(work(p), signal);
  assert.equal(waiting()?.reason, "ImagePullBackOff");
  assert.equal(
    waiting()?.message,
    `Back-off pulling image "example.com/broken:1"`,
  );
  const pulls = runtime.calls.filter((c) => c === "pullImage").length;
  await clock.advance(10_000);
  await syncer.syncPod(work(p), signal);
  assert.equal(waiting()?.reason, "ErrImagePull");
  assert.equal(
    runtime.calls.filter((c) => c === "pullImage").length,
    pulls + 1,
  );
  assert.equal(statusManager.getPodStatus("u1")?.phase, "Pending");
});

Deno.test("syncPod() reports ErrImageNeverPull for a missing image with policy Never", async () => {
  const { runtime, statusManager, syncer, signal } = setup();
  const p = pod({
    containers: [{
      name: "app",
      image: "nginx:1.27",
      imagePullPolicy: "Never",
    }],
  });
  await syncer.syncPod(work(p), signal);
  const w = statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state
    .waiting;
  assert.equal(w?.reason, "ErrImageNeverPull");
  assert.equal(
    w?.message,
    `Container image "nginx:1.27" is not present with pull policy of Never`,
  );
  assert.equal(runtime.calls.includes("pullImage"), false);
});

Deno.test("syncPod() reports CreateContainerConfigError for a bad env reference", async () => {
  const { statusManager, syncer, signal } = setup();
  const p = pod({
    containers: [{
      name: "app",
      image: "nginx:1.27",
      env: [{ name: "X", valueFrom: { fieldRef: { fieldPath: "spec.nope" } } }],
    }],
  });
  await syncer.syncPod(work(p), signal);
  const w = statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state
    .waiting;
  assert.equal(w?.reason, "CreateContainerConfigError");
  assert.match(
    w?.message ?? "",
    /spec\.containers\[0\]\.env\[0\]\.valueFrom\.fieldRef\.fieldPath/,
  );
});

Deno.test("syncPod(): service env vars wait for the first Service list, except for static pods", async () => {
  let synced = false;
  const services: ServiceLister = {
    hasSynced: () => synced,
    list: () => [{
      metadata: { namespace: "default", name: "kubernetes" },
      spec: { clusterIP: "10.96.0.1", ports: [{ name: "https", port: 443 }] },
    }],
  };
  const { runtime, statusManager, syncer, signal } = setup({}, services);
  const container = {
    name: "app",
    image: "nginx:1.27",
    command: ["echo", "$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"],
  };
  const p = pod({ containers: [container] });
  await syncer.syncPod(work(p), signal);
  const w = statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state
    .waiting;
  assert.equal(w?.reason, "CreateContainerConfigError");
  assert.equal(
    w?.message,
    "services have not yet been read at least once, cannot construct envvars",
  );
  assert.equal(runtime.containers.size, 0);
  // a static pod does not wait (its containers may be what serves the API)
  const s = pod({ containers: [container] });
  s.metadata = {
    ...s.metadata,
    uid: "u2",
    name: "static",
    annotations: { "kubernetes.io/config.source": "file" },
  };
  await syncer.syncPod(work(s), signal);
  assert.deepEqual(
    [...runtime.containers.values()].map((c) => c.command.join(" ")),
    ["echo 10.96.0.1:443"],
  );
  synced = true;
  await syncer.syncPod(work(p), signal);
  assert.equal(runtime.containers.size, 2);
});

Deno.test("syncPod(): a (static) pod past activeDeadlineSeconds fails with DeadlineExceeded and is requeued at its deadline", async () => {
  const { clock, runtime, statusManager, syncer, signal } = setup();
  const p = pod({
    activeDeadlineSeconds: 30,
    containers: [{ name: "app", image: "nginx:1.27" }],
  });
  // a static pod: the deadline counts from the status cache's start time
  p.metadata.annotations = { "kubernetes.io/config.source": "file" };
  const first = await syncer.syncPod(work(p), signal);
  assert.equal(first.terminal, false);
  assert.equal(first.retryAfterMs, 30_000);
  await clock.advance(10_000);
  assert.equal((await syncer.syncPod(work(p), signal)).retryAfterMs, 20_000);
  await clock.advance(20_000);
  const late = await syncer.syncPod(work(p), signal);
  assert.equal(late.terminal, true);
  const failed = statusManager.getPodStatus("u1")!;
  assert.deepEqual([failed.phase, failed.reason, failed.message], [
    "Failed",
    "DeadlineExceeded",
    "Pod was active on the node longer than the specified deadline",
  ]);
  // the worker then terminates it: containers stop, the reason stays
  await syncer.syncTerminatingPod(
    { pod: p, updateType: "kill", gracePeriodSeconds: 0 },
    signal,
  );
  assert.ok(
    [...runtime.containers.values()].every((c) => c.state === "exited"),
  );
  const final = statusManager.getPodStatus("u1")!;
  assert.deepEqual([final.phase, final.reason], ["Failed", "DeadlineExceeded"]);
});

Deno.test("syncPod(): a pod stopped for its deadline stays Failed/DeadlineExceeded though its container exits 0 on SIGTERM", async () => {
  const { clock, statusManager, syncer, signal } = setup({
    containers: { app: { sigtermExitCode: 0 } },
  });
  const p = pod({
    activeDeadlineSeconds: 5,
    containers: [{ name: "app", image: "pause:3.10" }],
  });
  await syncer.syncPod(work(p), signal);
  await clock.advance(5_000);
  assert.equal((await syncer.syncPod(work(p), signal)).terminal, true);
  await syncer.syncTerminatingPod(
    { pod: p, updateType: "kill", gracePeriodSeconds: 0 },
    signal,
  );
  await syncer.syncTerminatedPod({ pod: p, updateType: "kill" }, signal);
  const final = statusManager.getPodStatus("u1")!;
  assert.deepEqual(
    [
      final.phase,
      final.reason,
      final.containerStatuses?.[0]?.state.terminated?.exitCode,
    ],
    ["Failed", "DeadlineExceeded", 0],
  );
});

Deno.test("syncPod(): a deadline shortened by an update fails a pod that started long ago", async () => {
  const { clock, statusManager, syncer, signal } = setup();
  const p = pod({ containers: [{ name: "app", image: "nginx:1.27" }] });
  const first = await syncer.syncPod(work(p), signal);
  assert.equal(first.retryAfterMs, undefined);
  await clock.advance(6_000);
  const updated = { ...p, spec: { ...p.spec, activeDeadlineSeconds: 5 } };
  const out = await syncer.syncPod(
    work(updated, { updateType: "update" }),
    signal,
  );
  assert.equal(out.terminal, true);
  assert.equal(statusManager.getPodStatus("u1")?.reason, "DeadlineExceeded");
});

Deno.test("syncPod(): Ready waits for the readiness gates the API status reports True", async () => {
  const { statusManager, syncer, signal } = setup();
  const p = pod({
    readinessGates: [{ conditionType: "example.com/lb" }],
    containers: [{ name: "app", image: "nginx:1.27" }],
  });
  await syncer.syncPod(work(p), signal);
  const ready = () =>
    statusManager.getPodStatus("u1")?.conditions?.find((c) =>
      c.type === "Ready"
    );
  assert.deepEqual(
    [ready()?.status, ready()?.reason, ready()?.message],
    [
      "False",
      "ReadinessGatesNotReady",
      'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
    ],
  );
  const gateTrue: Pod = {
    ...p,
    status: { conditions: [{ type: "example.com/lb", status: "True" }] },
  };
  await syncer.syncPod(work(gateTrue), signal);
  assert.equal(ready()?.status, "True");
  // the gate's condition is not the kubelet's: its status never carries (or overwrites) it
  assert.equal(
    statusManager.getPodStatus("u1")?.conditions?.some((c) =>
      c.type === "example.com/lb"
    ),
    false,
  );
});

Deno.test("syncPod() recreates the sandbox when it stops being ready", async () => {
  const { runtime, syncer, signal } = setup();
  const p = pod({ containers: [{ name: "app", image: "nginx:1.27" }] });
  await syncer.syncPod(work(p), signal);
  const first = [...runtime.sandboxes.values()][0]!;
  await runtime.stopPodSandbox({ podSandboxId: first.id });
  await syncer.syncPod(work(p), signal);
  const sandboxes = [...runtime.sandboxes.values()].sort((a, b) =>
    a.metadata.attempt - b.metadata.attempt
  );
  assert.deepEqual(sandboxes.map((s) => [s.metadata.attempt, s.state]), [[
    0,
    "notready",
  ], [1, "ready"]]);
  const running = [...runtime.containers.values()].filter((c) =>
    c.state === "running"
  );
  assert.equal(running.length, 1);
  assert.equal(running[0]?.sandboxId, sandboxes[1]?.id);
});

Deno.test("syncPod() rejects when the runtime is unreachable", async () => {
  const { runtime, syncer, signal } = setup();
  await runtime.close();
  const p = pod({ containers: [{ name: "app", image: "nginx:1.27" }] });
  await assert.rejects(syncer.syncPod(work(p), signal), /closed/);
});

Deno.test("syncTerminatingPod() runs the preStop hook inside the grace period", async () => {
  const { clock, runtime, syncer, signal } = setup({
    containers: {
      app: {
        ignoreSigterm: true,
        exec: [{ command: ["/bin/drain"], delayMs: 3_000 }],
      },
    },
  });
  const p = pod({
    terminationGracePeriodSeconds: 10,
    containers: [{
      name: "app",
      image: "nginx:1.27",
      lifecycle: { preStop: { exec: { command: ["/bin/drain"] } } },
    }],
  });
  await syncer.syncPod(work(p), signal);
  let done = false;
  const stopping = syncer.syncTerminatingPod(work(p), signal).then(() => {
    done = true;
  });
  await clock.advance(9_999);
  assert.equal(done, false, "3s hook + 7s remaining stop timeout");
  await clock.advance(1);
  await stopping;
  assert.ok(
    runtime.calls.indexOf("execSync") <
      runtime.calls.lastIndexOf("stopContainer"),
  );
});

Deno.test("syncPod() kills a container whose postStart hook fails", async () => {
  const { runtime, statusManager, syncer, signal } = setup({
    containers: {
      app: {
        exec: [{ command: ["/bin/setup"], exitCode: 1, stderr: "no config" }],
      },
    },
  });
  const p = pod({
    containers: [{
      name: "app",
      image: "nginx:1.27",
      lifecycle: { postStart: { exec: { command: ["/bin/setup"] } } },
    }],
  });
  await syncer.syncPod(work(p), signal);
  assert.equal([...runtime.containers.values()][0]?.state, "exited");
  const w = statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state
    .waiting;
  assert.equal(w?.reason, "PostStartHookError");
  assert.match(w?.message ?? "", /exited with 1: no config/);
});

Deno.test("syncPod() reports RunContainerError when the runtime cannot start a container", async () => {
  const { statusManager, syncer, signal } = setup({
    containers: { app: { startError: 'exec: "/nope": no such file' } },
  });
  const p = pod({
    containers: [{ name: "app", image: "nginx:1.27" }, {
      name: "ok",
      image: "nginx:1.27",
    }],
  });
  const out = await syncer.syncPod(work(p), signal);
  const statuses = statusManager.getPodStatus("u1")?.containerStatuses ?? [];
  assert.equal(statuses[0]?.state.waiting?.reason, "RunContainerError");
  assert.ok(
    statuses[1]?.state.running,
    "one failing container does not block the others",
  );
  assert.equal(out.retryAfterMs, 10_000);
});

Deno.test("syncPod() reports CreatePodSandboxError and starts nothing", async () => {
  const { runtime, statusManager, syncer, signal } = setup();
  runtime.injectError(
    "runPodSandbox",
    new Error("failed to setup network for sandbox"),
  );
  const p = pod({ containers: [{ name: "app", image: "nginx:1.27" }] });
  const out = await syncer.syncPod(work(p), signal);
  assert.equal(runtime.containers.size, 0);
  assert.deepEqual(syncer.lastSyncResults("u1").map((r) => r.reason), [
    "CreatePodSandboxError",
  ]);
  assert.equal(out.retryAfterMs, 10_000);
  assert.equal(
    statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state.waiting
      ?.reason,
    "ContainerCreating",
  );
});

Deno.test("syncPod() runs a host-network pod with the node's IP and no hostname", async () => {
  const { runtime, statusManager, syncer, signal } = setup();
  const p = pod({
    hostNetwork: true,
    containers: [{ name: "app", image: "nginx:1.27" }],
  });
  await syncer.syncPod(work(p), signal);
  const sandbox = [...runtime.sandboxes.values()][0]!;
  assert.equal(sandbox.hostNetwork, true);
  assert.equal(sandbox.hostname, "");
  assert.equal(statusManager.getPodStatus("u1")?.podIP, "192.168.0.10");
  await syncer.syncPod(work(p), signal);
  assert.equal(runtime.sandboxes.size, 1, "the host-network sandbox is kept");
});

Deno.test("syncPod() stops at once when its signal aborts during an image pull", async () => {
  const { clock, runtime, syncer } = setup({
    images: { "slow:1": { pullDelayMs: 60_000 } },
  });
  const p = pod({ containers: [{ name: "app", image: "slow:1" }] });
  const controller = new AbortController();
  const syncing = syncer.syncPod(work(p), controller.signal);
  await clock.advance(1_000);
  controller.abort(new Error("pod is being killed"));
  await assert.rejects(syncing, /pod is being killed|canceled/);
  assert.equal(runtime.containers.size, 0);
});
