import assert from "node:assert/strict";
import { startedAt } from "../../bench/_pod_starts.ts";
import type { TraceEntry } from "./normalize.ts";

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
const call = (
  method: string,
  startMs: number,
  durationMs: number,
  request: Record<string, unknown>,
  response: Record<string, unknown> = {},
  error?: string,
): TraceEntry => ({
  start: at(startMs),
  durationMs,
  method: `/runtime.v1.RuntimeService/${method}`,
  request,
  response,
  ...(error ? { error } : {}),
});
const sandbox = (name: string) => ({
  config: { metadata: { name, namespace: "ns" } },
});

Deno.test("a pod start's time inside its own runtime calls, apart from the kubelet's", () => {
  const trace = [
    call("RunPodSandbox", 100, 300, sandbox("a"), { podSandboxId: "s1" }),
    // another pod's and pod-less calls are not this pod's
    call("RunPodSandbox", 150, 500, sandbox("b"), { podSandboxId: "s2" }),
    call("ListContainers", 420, 7, {}),
    call("CreateContainer", 430, 40, { podSandboxId: "s1" }, {
      containerId: "c1",
    }),
    call("StartContainer", 480, 100, { containerId: "c1" }),
    // after the start it no longer counts
    call("ContainerStatus", 600, 5, { containerId: "c1" }),
    call("CreateContainer", 700, 40, { podSandboxId: "s1" }, {
      containerId: "c9",
    }),
  ];
  const started = startedAt(trace);
  const t0 = Date.UTC(2026, 0, 1);
  assert.equal(started.get("ns/a"), t0 + 580);
  assert.equal(started.sandboxSent.get("ns/a"), t0 + 100);
  assert.equal(started.inRuntime.get("ns/a"), 300 + 40 + 100);
  assert.equal(started.has("ns/b"), false);
  assert.equal(started.inRuntime.get("ns/b"), 500);
  assert.deepEqual(Object.fromEntries(started.callMs), {
    RunPodSandbox: [300, 500],
    CreateContainer: [40],
    StartContainer: [100],
  });
});

Deno.test("a failed StartContainer's time counts until a relist shows the container running", () => {
  const trace = [
    call("RunPodSandbox", 0, 200, sandbox("a"), { podSandboxId: "s1" }),
    call("CreateContainer", 210, 50, { podSandboxId: "s1" }, {
      containerId: "c1",
    }),
    call(
      "StartContainer",
      270,
      2000,
      { containerId: "c1" },
      {},
      "DeadlineExceeded",
    ),
    call("ListContainers", 2300, 10, {}, {
      containers: [{ id: "c1", state: "CONTAINER_RUNNING" }],
    }),
  ];
  const started = startedAt(trace);
  assert.equal(started.get("ns/a"), Date.UTC(2026, 0, 1) + 2310);
  assert.equal(started.inRuntime.get("ns/a"), 200 + 50 + 2000);
});
