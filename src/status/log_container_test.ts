import assert from "node:assert/strict";
import type { ContainerStatus } from "../api/mod.ts";
import { logContainer } from "./log_container.ts";

const status = (s: Partial<ContainerStatus>): ContainerStatus => ({
  name: "c",
  state: {},
  lastState: {},
  ready: false,
  restartCount: 0,
  image: "busybox",
  imageID: "",
  ...s,
});

const last = { terminated: { exitCode: 1, containerID: "containerd://old" } };

Deno.test("logContainer() reads the running instance, or the last one with --previous", () => {
  const s = status({
    state: { running: {} },
    containerID: "containerd://new",
    lastState: last,
  });
  assert.deepEqual(logContainer(s, "p", "c", false), {
    id: "containerd://new",
  });
  assert.deepEqual(logContainer(s, "p", "c", true), { id: "containerd://old" });
  assert.deepEqual(
    logContainer(status({ state: { running: {} } }), "p", "c", true),
    { error: 'previous terminated container "c" in pod "p" not found' },
  );
});

Deno.test("logContainer() reads the last instance while the next one waits", () => {
  const s = status({
    state: { waiting: { reason: "CrashLoopBackOff" } },
    lastState: last,
  });
  assert.deepEqual(logContainer(s, "p", "c", false), {
    id: "containerd://old",
  });
  assert.deepEqual(
    logContainer(
      status({ state: { terminated: { exitCode: 0 } } }),
      "p",
      "c",
      false,
    ),
    { error: 'container "c" in pod "p" is terminated' },
  );
});

Deno.test("logContainer() says why a container never started has no log, in upstream's words", () => {
  const waiting = (reason: string) =>
    logContainer(status({ state: { waiting: { reason } } }), "p", "c", false);
  assert.deepEqual(waiting("ErrImagePull"), {
    error:
      `container "c" in pod "p" is waiting to start: image can't be pulled`,
  });
  assert.deepEqual(waiting("ImagePullBackOff"), {
    error:
      'container "c" in pod "p" is waiting to start: trying and failing to pull image',
  });
  assert.deepEqual(waiting("ContainerCreating"), {
    error: 'container "c" in pod "p" is waiting to start: ContainerCreating',
  });
  assert.deepEqual(logContainer(status({}), "p", "c", false), {
    error: 'container "c" in pod "p" is waiting to start - no logs yet',
  });
  assert.deepEqual(logContainer(undefined, "p", "c", false), {
    error: 'container "c" in pod "p" is not available',
  });
});
