import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { GrpcCode, RuntimeError } from "../../runtime/mod.ts";
import { createSimRuntime, type SimScenario } from "../../runtime/sim/mod.ts";
import { createPodStatusManager } from "../../status/mod.ts";
import { createPodSyncer } from "../lifecycle/pod_syncer.ts";
import { runtimeErrorText, runtimeStatusMessage } from "./runtime_messages.ts";
import type { Pod } from "../types.ts";

function setup(scenario: SimScenario = {}) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock, scenario });
  const statusManager = createPodStatusManager();
  const syncer = createPodSyncer({
    runtime,
    images: runtime,
    clock,
    logger: new CaptureLogger(),
    statusManager,
    mkdir: () => Promise.resolve(),
  }, {
    podLogsDir: "/var/log/pods",
    serializeImagePulls: true,
    nodeName: "node-a",
  });
  return { runtime, statusManager, syncer };
}

const POD: Pod = {
  metadata: { name: "web", namespace: "default", uid: "u1" },
  spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
};

const work = { pod: POD, updateType: "create" as const };
const signal = new AbortController().signal;
const waiting = (s: ReturnType<typeof setup>) =>
  s.statusManager.getPodStatus("u1")?.containerStatuses?.[0]?.state.waiting;

Deno.test("runtimeStatusMessage() and runtimeErrorText() read like grpc-go", () => {
  const error = new RuntimeError(GrpcCode.NotFound, "image not found", {
    method: "/runtime.v1.ImageService/PullImage",
  });
  assert.equal(runtimeStatusMessage(error), "image not found");
  assert.equal(
    runtimeErrorText(error),
    "rpc error: code = NotFound desc = image not found",
  );
  assert.equal(runtimeStatusMessage(new Error("plain")), "plain");
});

Deno.test("syncPod() shows the runtime's message for CreateContainerError and RunContainerError", async () => {
  // upstream startContainer: the status message is the gRPC status message, no prefix of ours
  const create = setup();
  create.runtime.injectError(
    "createContainer",
    new RuntimeError(
      GrpcCode.Unknown,
      'failed to reserve container name "app_web": name is reserved',
      { method: "/runtime.v1.RuntimeService/CreateContainer" },
    ),
  );
  await create.syncer.syncPod(work, signal);
  assert.deepEqual(waiting(create), {
    reason: "CreateContainerError",
    message: 'failed to reserve container name "app_web": name is reserved',
  });

  const start = setup({
    containers: { app: { startError: 'exec: "/nope": no such file' } },
  });
  await start.syncer.syncPod(work, signal);
  assert.equal(waiting(start)?.reason, "RunContainerError");
  assert.equal(waiting(start)?.message, 'exec: "/nope": no such file');
});

Deno.test("syncPod() shows grpc-go's error text for image pull and sandbox failures", async () => {
  const pull = setup();
  pull.runtime.injectError(
    "pullImage",
    new RuntimeError(GrpcCode.NotFound, "failed to resolve reference", {
      method: "/runtime.v1.ImageService/PullImage",
    }),
  );
  await pull.syncer.syncPod(work, signal);
  assert.equal(
    waiting(pull)?.message,
    'Failed to pull image "nginx:1.27": rpc error: code = NotFound desc = failed to resolve reference',
  );

  const sandbox = setup();
  sandbox.runtime.injectError(
    "runPodSandbox",
    new RuntimeError(GrpcCode.Unknown, "failed to setup network", {
      method: "/runtime.v1.RuntimeService/RunPodSandbox",
    }),
  );
  await sandbox.syncer.syncPod(work, signal);
  assert.equal(
    sandbox.syncer.lastSyncResults("u1")[0]?.message,
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network",
  );
});
