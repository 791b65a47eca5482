import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import {
  ContainerStatusSchema,
  create,
  NotFoundError,
  PodSandboxStatusSchema,
} from "../../runtime/mod.ts";
import { createSimRuntime } from "../../runtime/testing.ts";
import {
  getPodRuntimeStatus,
  nsToMs,
  toContainerView,
  toSandboxView,
} from "./runtime_pod_status.ts";

const T0 = Date.UTC(2026, 0, 1);

async function seed() {
  const clock = new FakeClock(T0);
  const runtime = createSimRuntime({ clock });
  const labels = {
    "io.kubernetes.pod.uid": "u1",
    "io.kubernetes.pod.name": "web",
    "io.kubernetes.pod.namespace": "default",
  };
  const { podSandboxId } = await runtime.runPodSandbox({
    config: {
      metadata: { name: "web", uid: "u1", namespace: "default", attempt: 0 },
      labels,
    },
  });
  await runtime.pullImage({ image: { image: "nginx:1.27" } });
  const mk = async (attempt: number) => {
    const { containerId } = await runtime.createContainer({
      podSandboxId,
      config: {
        metadata: { name: "app", attempt },
        image: { image: "nginx:1.27" },
        labels: { ...labels, "io.kubernetes.container.name": "app" },
        annotations: {
          "io.kubernetes.container.hash": "abc123",
          "io.kubernetes.container.restartCount": String(attempt),
          "io.kubernetes.pod.terminationGracePeriod": "45",
        },
      },
    });
    return containerId;
  };
  const first = await mk(0);
  await clock.advance(1_000);
  const second = await mk(1);
  await runtime.startContainer({ containerId: second });
  // another pod's sandbox must not show up
  await runtime.runPodSandbox({
    config: {
      metadata: { name: "other", uid: "u2", namespace: "default" },
      labels: { "io.kubernetes.pod.uid": "u2" },
    },
  });
  return { runtime, podSandboxId, first, second };
}

Deno.test("getPodRuntimeStatus() reads one pod's sandboxes and containers, newest first", async () => {
  const { runtime, podSandboxId, first, second } = await seed();
  const s = await getPodRuntimeStatus(runtime, {
    uid: "u1",
    name: "web",
    namespace: "default",
  });
  assert.deepEqual(
    s.sandboxes.map((x) => [x.id, x.ready, x.attempt, x.networkMode]),
    [[podSandboxId, true, 0, "pod"]],
  );
  assert.ok(s.sandboxes[0]!.ip.length > 0);
  assert.deepEqual(s.containers.map((c) => [c.id, c.state, c.restartCount]), [
    [second, "running", 1],
    [first, "created", 0],
  ]);
  const c = s.containers[0]!;
  assert.equal(c.name, "app");
  assert.equal(c.hash, "abc123");
  assert.equal(c.sandboxId, podSandboxId);
  assert.equal(c.terminationGracePeriodSeconds, 45);
  assert.equal(c.createdAt, T0 + 1_000);
});

Deno.test("getPodRuntimeStatus() skips objects that vanish between list and status", async () => {
  const { runtime } = await seed();
  runtime.injectError("containerStatus", new NotFoundError("gone"));
  const s = await getPodRuntimeStatus(runtime, {
    uid: "u1",
    name: "web",
    namespace: "default",
  });
  assert.equal(s.containers.length, 1);
});

Deno.test("toSandboxView() converts CRI fields", () => {
  const v = toSandboxView(create(PodSandboxStatusSchema, {
    id: "s",
    state: 1,
    createdAt: 5_000_000_000n,
    metadata: { attempt: 3 },
    network: { ip: "10.0.0.1", additionalIps: [{ ip: "fd00::1" }] },
  }));
  assert.deepEqual(v, {
    id: "s",
    attempt: 3,
    ready: false,
    createdAt: 5_000,
    ip: "10.0.0.1",
    additionalIps: ["fd00::1"],
  });
  assert.equal(nsToMs(1_999_999n), 1);
});

Deno.test("toContainerView() finds the termination-message mount, policy and log path", () => {
  const status = (path?: string) =>
    create(ContainerStatusSchema, {
      id: "c",
      state: 2,
      metadata: { name: "app" },
      annotations: {
        ...(path
          ? { "io.kubernetes.container.terminationMessagePath": path }
          : {}),
        "io.kubernetes.container.terminationMessagePolicy":
          "FallbackToLogsOnError",
      },
      mounts: [
        { containerPath: "/data", hostPath: "/srv/data" },
        { containerPath: "/dev/termination-log", hostPath: "/k/default" },
        { containerPath: "/tmp/why", hostPath: "/k/custom" },
      ],
      logPath: "/var/log/pods/x/app/0.log",
    });
  const v = toContainerView(status("/tmp/why"), "s");
  assert.equal(v.terminationMessageHostPath, "/k/custom");
  assert.equal(v.terminationMessagePolicy, "FallbackToLogsOnError");
  assert.equal(v.logPath, "/var/log/pods/x/app/0.log");
  assert.equal(
    toContainerView(status(), "s").terminationMessageHostPath,
    "/k/default",
  );
  const bare = toContainerView(create(ContainerStatusSchema, { id: "c" }), "s");
  assert.equal("terminationMessageHostPath" in bare, false);
  assert.equal("logPath" in bare, false);
});
