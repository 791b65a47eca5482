import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createSimRuntime } from "../../runtime/sim/mod.ts";
import { createPodStatusManager } from "../../status/mod.ts";
import { RuntimeStatusCache } from "../status/runtime_status_cache.ts";
import { createPodSyncer } from "./pod_syncer.ts";
import type { Pod } from "../types.ts";

function setup() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock });
  const statusManager = createPodStatusManager();
  const runtimeCache = new RuntimeStatusCache();
  const syncer = createPodSyncer(
    {
      runtime,
      images: runtime,
      clock,
      logger: new CaptureLogger(),
      statusManager,
      runtimeCache,
      mkdir: () => Promise.resolve(),
    },
    { podLogsDir: "/var/log/pods", serializeImagePulls: true, nodeName: "n" },
  );
  const pod: Pod = {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: {
      restartPolicy: "Never",
      containers: [{ name: "app", image: "nginx:1.27" }],
    },
  };
  const signal = new AbortController().signal;
  const reads = () =>
    runtime.calls.filter((c) =>
      c === "listPodSandbox" || c === "listContainers"
    )
      .length;
  return { runtime, statusManager, syncer, runtimeCache, pod, signal, reads };
}

Deno.test("syncPod() of a pod whose runtime state is kept reads nothing from the runtime", async () => {
  const { syncer, pod, signal, reads, runtimeCache } = setup();
  await syncer.syncPod({ pod, updateType: "create" }, signal);
  assert.ok(runtimeCache.get("u1"), "the state after starting the pod is kept");
  const before = reads();
  await syncer.syncPod({ pod, updateType: "sync" }, signal);
  await syncer.syncPod({ pod, updateType: "sync" }, signal);
  assert.equal(reads(), before);
});

Deno.test("syncPod() reads the runtime again once the pod is invalidated, and reports the change", async () => {
  const { runtime, statusManager, syncer, pod, signal, reads, runtimeCache } =
    setup();
  await syncer.syncPod({ pod, updateType: "create" }, signal);
  const app = [...runtime.containers.values()][0]!;
  app.state = "exited";
  app.exitCode = 3;
  app.finishedAt = app.startedAt + 1;
  // unseen until the PLEG tells: the kept state still says running
  await syncer.syncPod({ pod, updateType: "sync" }, signal);
  assert.equal(statusManager.getPodStatus("u1")?.phase, "Running");
  runtimeCache.invalidate("u1");
  const before = reads();
  const out = await syncer.syncPod({ pod, updateType: "sync" }, signal);
  assert.ok(reads() > before);
  assert.equal(out.terminal, true);
  assert.equal(statusManager.getPodStatus("u1")?.phase, "Failed");
});

Deno.test("a syncPod() that fails voids the kept state (the runtime may have changed)", async () => {
  const { runtime, syncer, pod, signal, runtimeCache } = setup();
  await syncer.syncPod({ pod, updateType: "create" }, signal);
  assert.ok(runtimeCache.get("u1"));
  const restarting: Pod = {
    ...pod,
    spec: {
      ...pod.spec,
      containers: [{ name: "app", image: "nginx:1.28" }],
    },
  };
  // the container is replaced, then the runtime fails the read after it
  runtime.injectError("podSandboxStatus", new Error("runtime went away"));
  await assert.rejects(
    syncer.syncPod({ pod: restarting, updateType: "update" }, signal),
    /runtime went away/,
  );
  assert.equal(runtimeCache.get("u1"), undefined);
});
