import assert from "node:assert/strict";
import {
  jsonDiff,
  lifecycle,
  mask,
  parseTrace,
  podTraces,
  type TraceEntry,
} from "./normalize.ts";

const SVC = "/runtime.v1.RuntimeService/";
const SB = "a".repeat(64);
const C1 = "b".repeat(64);
const C2 = "c".repeat(64);
const UID = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

function call(
  method: string,
  request: Record<string, unknown>,
  response: Record<string, unknown> = {},
  error?: string,
): TraceEntry {
  return {
    start: "2026-12-02T00:00:00Z",
    durationMs: 1,
    method: SVC + method,
    request,
    response,
    ...(error ? { error } : {}),
  };
}

const trace: TraceEntry[] = [
  call("Version", {}),
  call("RunPodSandbox", {
    config: {
      metadata: { name: "web-n", namespace: "default", uid: UID, attempt: 0 },
      logDirectory: `/var/log/pods/default_web-n_${UID}`,
    },
  }, { podSandboxId: SB }),
  call("CreateContainer", {
    podSandboxId: SB,
    config: {
      metadata: { name: "app", attempt: 0 },
      logPath: "app/0.log",
      mounts: [{ hostPath: `/tmp/root-1/pods/${UID}/etc-hosts` }],
    },
  }, { containerId: C1 }),
  call("StartContainer", { containerId: C1 }),
  call("StartContainer", { containerId: "d".repeat(64) }), // not ours: ignored
  call("StopContainer", { containerId: C1, timeout: "30" }),
  call("StopContainer", { containerId: C1, timeout: "30" }),
  call("CreateContainer", {
    podSandboxId: SB,
    config: { metadata: { name: "app", attempt: 1 } },
  }, { containerId: C2 }),
  call("StartContainer", { containerId: C2 }, {}, "rpc error: boom"),
  call("StopPodSandbox", { podSandboxId: SB }),
];

Deno.test("podTraces: lifecycle per pod by container name and attempt, foreign IDs left out", () => {
  const pods = podTraces(trace, { paths: {} });
  assert.deepEqual([...pods.keys()], ["default/web-n"]);
  assert.deepEqual(lifecycle(pods.get("default/web-n")!.events), [
    "RunPodSandbox#0",
    "CreateContainer app#0",
    "StartContainer app",
    "StopContainer app (30s)",
    "CreateContainer app#1",
    "StartContainer app !",
    "StopPodSandbox",
  ]);
});

Deno.test("podTraces: configs are masked (UIDs, run directories) and only the first is kept", () => {
  const pod = podTraces(trace, { paths: { root: "/tmp/root-1" } }).get(
    "default/web-n",
  )!;
  assert.deepEqual(pod.sandboxConfig, {
    logDirectory: "/var/log/pods/default_web-n_<uid>",
    metadata: { attempt: 0, name: "web-n", namespace: "default", uid: "<uid>" },
  });
  assert.deepEqual(pod.containerConfigs.app, {
    logPath: "app/0.log",
    metadata: { attempt: 0, name: "app" },
    mounts: [{ hostPath: "<root>/pods/<uid>/etc-hosts" }],
  });
});

Deno.test("mask: the longest directory wins, runtime IDs and UUIDs are hidden", () => {
  assert.deepEqual(
    mask(
      { b: "/r/x/y", a: `${SB} 123e4567-e89b-12d3-a456-426614174000` },
      { paths: { root: "/r", logs: "/r/x" } },
    ),
    { a: "<id> <uid>", b: "<logs>/y" },
  );
});

Deno.test("jsonDiff: names each differing path, absent values included", () => {
  assert.deepEqual(jsonDiff({ a: 1, b: { c: [1] } }, { a: 1, b: { c: [2] } }), [
    "b.c: [1] ≠ [2]",
  ]);
  assert.deepEqual(jsonDiff({ a: 1 }, { b: 2 }), [
    "a: 1 ≠ (absent)",
    "b: (absent) ≠ 2",
  ]);
  assert.deepEqual(jsonDiff({ a: 1 }, { a: 1 }), []);
});

Deno.test("parseTrace: one entry per non-empty line", () => {
  const text = trace.map((e) => JSON.stringify(e)).join("\n") + "\n\n";
  assert.equal(parseTrace(text).length, trace.length);
});

Deno.test("parseTrace: a half-written last line is left out, a broken one inside is an error", () => {
  const lines = trace.map((e) => JSON.stringify(e));
  const half = lines.join("\n") + "\n" + lines[0]!.slice(0, 10);
  assert.equal(parseTrace(half).length, trace.length);
  const broken = [lines[0]!.slice(0, 10), ...lines].join("\n") + "\n";
  assert.throws(() => parseTrace(broken), SyntaxError);
});

Deno.test("mask: times and the termination-log file's random name are hidden", () => {
  assert.deepEqual(
    mask([
      "2026-12-02T20:43:31.885780185Z",
      "/r/pods/u/containers/app/0ca2ee0f",
    ], {
      paths: { root: "/r" },
    }),
    ["<time>", "<root>/pods/u/containers/app/<random>"],
  );
});

Deno.test("lifecycle: a run of stops is sorted, as kubelets stop containers in parallel", () => {
  const ev = (call: string, container?: string) => ({
    call,
    ...(container ? { container } : {}),
  });
  assert.deepEqual(
    lifecycle([
      ev("StartContainer", "b"),
      ev("StopContainer", "b"),
      ev("StopContainer", "a"),
      ev("StopContainer", "b"),
      ev("StopPodSandbox"),
      ev("RemoveContainer", "b"),
      ev("RemoveContainer", "a"),
    ]),
    [
      "StartContainer b",
      "StopContainer a",
      "StopContainer b",
      "StopPodSandbox",
      "RemoveContainer a",
      "RemoveContainer b",
    ],
  );
});
