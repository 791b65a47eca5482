import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { NotFoundError, RuntimeError } from "../runtime/mod.ts";
import { createSimRuntime } from "../runtime/testing.ts";
import { createPodStatusManager } from "../status/mod.ts";
import { garbageCollectOrphans, pruneDeadContainers } from "./gc.ts";
import { createPodSyncer } from "./pod_syncer.ts";
import type { Pod } from "./types.ts";

function pod(name: string, uid: string): Pod {
  return {
    metadata: { name, namespace: "default", uid },
    spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
  };
}

async function setup() {
  const clock = new FakeClock(0);
  const runtime = createSimRuntime({ clock });
  const logger = new CaptureLogger();
  const syncer = createPodSyncer(
    {
      runtime,
      images: runtime,
      clock,
      logger,
      statusManager: createPodStatusManager(),
      mkdir: () => Promise.resolve(),
    },
    { podLogsDir: "/logs", serializeImagePulls: true, nodeName: "n" },
  );
  const signal = new AbortController().signal;
  await syncer.syncPod(
    { pod: pod("keep", "u-keep"), updateType: "create" },
    signal,
  );
  await syncer.syncPod(
    { pod: pod("gone", "u-gone"), updateType: "create" },
    signal,
  );
  // an object not created by a kubelet (no pod uid label)
  const { podSandboxId } = await runtime.runPodSandbox({
    config: { metadata: { name: "foreign", uid: "x", namespace: "other" } },
  });
  return { runtime, logger, podSandboxId };
}

Deno.test("garbageCollectOrphans() removes only objects of inactive pods", async () => {
  const { runtime, logger, podSandboxId } = await setup();
  const result = await garbageCollectOrphans(
    { runtime, logger },
    new Set(["u-keep"]),
  );
  assert.deepEqual(result, {
    containersRemoved: 1,
    sandboxesRemoved: 1,
    errors: [],
  });
  const uids = [...runtime.sandboxes.values()].map((s) =>
    s.labels["io.kubernetes.pod.uid"] ?? s.id
  );
  assert.deepEqual(uids.sort(), [podSandboxId, "u-keep"].sort());
  assert.deepEqual(
    [...runtime.containers.values()].map((c) =>
      c.labels["io.kubernetes.pod.uid"]
    ),
    ["u-keep"],
  );
  const again = await garbageCollectOrphans(
    { runtime, logger },
    new Set(["u-keep"]),
  );
  assert.deepEqual(again, {
    containersRemoved: 0,
    sandboxesRemoved: 0,
    errors: [],
  });
});

Deno.test("garbageCollectOrphans() reports failures and treats NotFound as done", async () => {
  const { runtime, logger } = await setup();
  runtime.injectError("removeContainer", new NotFoundError("already gone"));
  runtime.injectError("stopPodSandbox", new RuntimeError(2, "device busy"));
  const result = await garbageCollectOrphans(
    { runtime, logger },
    new Set(["u-keep"]),
  );
  assert.equal(result.containersRemoved, 1);
  assert.equal(result.sandboxesRemoved, 0);
  assert.equal(result.errors.length, 1);
  assert.match(result.errors[0]!, /stop sandbox ".*": .*device busy/);
});

Deno.test("pruneDeadContainers() keeps the newest dead instance per container", async () => {
  const clock = new FakeClock(0);
  const runtime = createSimRuntime({
    clock,
    scenario: { containers: { app: { exitAfterMs: 100, exitCode: 1 } } },
  });
  const logger = new CaptureLogger();
  const syncer = createPodSyncer(
    {
      runtime,
      images: runtime,
      clock,
      logger,
      statusManager: createPodStatusManager(),
      mkdir: () => Promise.resolve(),
    },
    { podLogsDir: "/logs", serializeImagePulls: true, nodeName: "n" },
  );
  const signal = new AbortController().signal;
  const p = pod("web", "u1");
  for (let i = 0; i < 4; i++) {
    await syncer.syncPod({ pod: p, updateType: "sync" }, signal);
    await clock.advance(400_000); // exits, and any back-off window has passed
  }
  await syncer.syncPod({ pod: p, updateType: "sync" }, signal);
  const before = [...runtime.containers.values()].map((c) => c.metadata.attempt)
    .sort();
  assert.deepEqual(before, [0, 1, 2, 3, 4]);
  const result = await pruneDeadContainers({ runtime, logger });
  assert.equal(result.containersRemoved, 3);
  const after = [...runtime.containers.values()].map((
    c,
  ) => [c.metadata.attempt, c.state]).sort();
  assert.deepEqual(after, [[3, "exited"], [4, "running"]]);
});

Deno.test("pruneDeadContainers() removes empty, stopped, superseded sandboxes only", async () => {
  const clock = new FakeClock(0);
  const runtime = createSimRuntime({ clock });
  const logger = new CaptureLogger();
  const labels = { "io.kubernetes.pod.uid": "u1" };
  const old = await runtime.runPodSandbox({
    config: {
      metadata: { name: "web", uid: "u1", namespace: "d", attempt: 0 },
      labels,
    },
  });
  await runtime.stopPodSandbox({ podSandboxId: old.podSandboxId });
  await clock.advance(1_000);
  const current = await runtime.runPodSandbox({
    config: {
      metadata: { name: "web", uid: "u1", namespace: "d", attempt: 1 },
      labels,
    },
  });
  await clock.advance(1_000);
  // the newest sandbox of another pod is kept even when stopped
  const lone = await runtime.runPodSandbox({
    config: {
      metadata: { name: "x", uid: "u2", namespace: "d" },
      labels: { "io.kubernetes.pod.uid": "u2" },
    },
  });
  await runtime.stopPodSandbox({ podSandboxId: lone.podSandboxId });
  const result = await pruneDeadContainers({ runtime, logger });
  assert.equal(result.sandboxesRemoved, 1);
  assert.deepEqual(
    [...runtime.sandboxes.keys()].sort(),
    [current.podSandboxId, lone.podSandboxId].sort(),
  );
});
