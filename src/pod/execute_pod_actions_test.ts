import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createSimRuntime } from "../runtime/testing.ts";
import { createContainerBackoff } from "./backoff.ts";
import { type ExecuteDeps, executePodActions } from "./execute_pod_actions.ts";
import { createImagePuller } from "./image_puller.ts";
import { createInitContainerCleaner } from "./init_container_cleanup.ts";
import { computePodActions, type PodActions } from "./pod_actions.ts";
import type { Pod, PodRuntimeStatus } from "./types.ts";

function setup() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock });
  const logger = new CaptureLogger();
  const kill = { runtime, logger, clock, runtimeRequestTimeoutMs: 120_000 };
  const mkdir = () => Promise.resolve();
  const messageWriter = {
    createFile: () => Promise.resolve(),
    remove: () => Promise.resolve(),
    removeEmptyDir: () => Promise.resolve(),
  };
  const deps: ExecuteDeps = {
    runtime,
    logger,
    kill,
    start: {
      kill,
      runtime,
      logger,
      backoff: createContainerBackoff({ clock }),
      puller: createImagePuller({ images: runtime, clock, logger }, {
        serializeImagePulls: true,
      }),
      mkdir,
      readDirNames: () => Promise.resolve([]),
      podLogsDir: "/var/log/pods",
      messageWriter,
      nodeName: "node-a",
      hostIPs: [],
    },
    initContainers: createInitContainerCleaner({
      runtime,
      logger,
      messageWriter,
    }),
    mkdir,
    podLogsDir: "/var/log/pods",
    runtimeHandler: "",
  };
  return { runtime, logger, deps, signal: new AbortController().signal };
}

const pod: Pod = {
  metadata: { name: "web", namespace: "default", uid: "u1" },
  spec: {
    initContainers: [{ name: "init", image: "busybox" }],
    containers: [{ name: "app", image: "nginx" }],
  },
};

const empty: PodRuntimeStatus = {
  uid: "u1",
  name: "web",
  namespace: "default",
  sandboxes: [],
  containers: [],
};

function run(
  s: ReturnType<typeof setup>,
  actions: PodActions,
  status = empty,
) {
  return executePodActions(s.deps, {
    pod,
    status,
    actions,
    signal: s.signal,
    logger: s.logger,
  });
}

Deno.test("executePodActions() creates the sandbox, then starts only the planned init container", async () => {
  const s = setup();
  const results = await run(s, computePodActions(pod, empty));
  assert.deepEqual(results.map((r) => [r.action, r.reason]), [
    ["CreatePodSandbox", undefined],
    ["StartContainer", undefined],
  ]);
  assert.equal(results[1]!.target, "init");
  assert.deepEqual(
    [...s.runtime.containers.values()].map((c) => c.metadata.name),
    ["init"],
  );
  const create = s.runtime.calls.indexOf("runPodSandbox");
  assert.ok(create >= 0 && create < s.runtime.calls.indexOf("createContainer"));
});

Deno.test("executePodActions() stops at a failed sandbox: one CreatePodSandboxError, no container calls", async () => {
  const s = setup();
  s.runtime.injectError("runPodSandbox", new Error("no network"));
  const results = await run(s, computePodActions(pod, empty));
  assert.equal(results.length, 1);
  assert.equal(results[0]!.reason, "CreatePodSandboxError");
  assert.match(results[0]!.message ?? "", /^Failed to create pod sandbox: /);
  assert.ok(!s.runtime.calls.includes("createContainer"));
});

Deno.test("executePodActions() kills a pod that needs no new sandbox and starts nothing", async () => {
  const s = setup();
  await run(s, computePodActions(pod, empty));
  const actions: PodActions = {
    killPod: true,
    createSandbox: false,
    sandboxId: "",
    attempt: 0,
    initContainersToStart: [0],
    containersToStart: [0],
    containersToKill: new Map(),
  };
  const before = s.runtime.calls.length;
  await run(s, actions);
  const after = s.runtime.calls.slice(before);
  assert.ok(!after.includes("createContainer"), after.join(","));
  assert.ok(!after.includes("runPodSandbox"), after.join(","));
});
