import assert from "node:assert/strict";
import { ApiStatusError } from "../api/mod.ts";
import { FakeApiServer } from "../api/testing.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { NodeStatusReporter } from "./node_status.ts";
import type { NodeFacts } from "./node_status_setters.ts";

function makeFacts(): NodeFacts {
  return {
    hostname: "node-a",
    nodeIPs: [],
    cpuCores: 2,
    memoryBytes: 2 ** 30,
    maxPods: 110,
    nodeInfo: {
      machineID: "m",
      systemUUID: "",
      bootID: "b",
      kernelVersion: "6",
      osImage: "Linux",
      kubeletVersion: "v1.34.0",
      operatingSystem: "linux",
      architecture: "amd64",
    },
    containerRuntimeVersion: "containerd://1.7.0",
    kubeletPort: 10250,
    runtimeConditions: [
      { type: "RuntimeReady", status: true, reason: "", message: "" },
      { type: "NetworkReady", status: true, reason: "", message: "" },
    ],
  };
}

function setup(options: { reportFrequencyMs?: number } = {}) {
  const api = new FakeApiServer();
  const clock = new FakeClock();
  const current = { facts: makeFacts() };
  const events: string[] = [];
  const reporter = new NodeStatusReporter({
    api,
    clock,
    logger: new CaptureLogger(),
    facts: () => Promise.resolve(structuredClone(current.facts)),
    recordEvent: (type, reason, message) =>
      events.push(`${type} ${reason}: ${message}`),
  }, {
    registration: {
      nodeName: "node-a",
      hostname: "node-a",
      os: "linux",
      arch: "amd64",
    },
    updateFrequencyMs: 10_000,
    reportFrequencyMs: options.reportFrequencyMs ?? 300_000,
  });
  return { api, clock, current, reporter, events };
}

const patches = (api: FakeApiServer) =>
  api.calls.filter((c) => c.method === "patchNodeStatus");

Deno.test("NodeStatusReporter.run() registers the Node with its status, then patches only on change or when a report is due", async () => {
  const { api, clock, current, reporter } = setup({
    reportFrequencyMs: 60_000,
  });
  const stop = new AbortController();
  const running = reporter.run(stop.signal);
  await clock.advance(0);
  const node = api.nodes.get("node-a")!;
  assert.equal(node.metadata.labels?.["kubernetes.io/hostname"], "node-a");
  assert.equal(node.status?.conditions?.at(-1)?.status, "True");
  assert.equal(reporter.nodeUid, node.metadata.uid);
  // The first round reports (nothing reported yet); the next ones have nothing new.
  assert.equal(patches(api).length, 1);
  await clock.advance(30_000);
  assert.equal(patches(api).length, 1);
  // A change is patched at the next round, as a patch of the status alone.
  current.facts.runtimeConditions![1]!.status = false;
  await clock.advance(10_000);
  assert.equal(patches(api).length, 2);
  const body = patches(api)[1]!.body as { status: Record<string, unknown> };
  assert.deepEqual(Object.keys(body), ["status"]);
  assert.deepEqual(Object.keys(body.status), ["conditions"]);
  assert.equal(
    api.nodes.get("node-a")!.status?.conditions?.at(-1)?.status,
    "False",
  );
  // Unchanged for a full report period: reported again (fresh heartbeat).
  await clock.advance(60_000);
  assert.equal(patches(api).length, 3);
  stop.abort();
  await running;
});

Deno.test("NodeStatusReporter.register() reconciles a Node that already exists", async () => {
  const { api, clock, reporter } = setup();
  api.nodes.set("node-a", {
    metadata: {
      name: "node-a",
      uid: "old-uid",
      resourceVersion: "1",
      labels: { "kubernetes.io/hostname": "stale", team: "blue" },
    },
    spec: {},
  });
  assert.equal(await reporter.register(new AbortController().signal), true);
  const node = api.nodes.get("node-a")!;
  assert.equal(node.metadata.labels?.["kubernetes.io/hostname"], "node-a");
  assert.equal(node.metadata.labels?.team, "blue");
  assert.equal(reporter.nodeUid, "old-uid");
  assert.deepEqual(api.calls.map((c) => c.method), [
    "createNode",
    "getNode",
    "patchNodeStatus",
  ]);
  void clock;
});

Deno.test("NodeStatusReporter.run() puts back the OS and arch labels someone changed while it runs, at the next round", async () => {
  const { api, clock, reporter } = setup();
  const stop = new AbortController();
  const running = reporter.run(stop.signal);
  await clock.advance(0);
  const before = patches(api).length;
  const node = api.nodes.get("node-a")!;
  node.metadata.labels = {
    ...node.metadata.labels,
    "kubernetes.io/os": "dummyOS",
    "kubernetes.io/arch": "dummyArch",
    team: "blue",
  };
  await clock.advance(10_000);
  assert.equal(patches(api).length, before + 1);
  const labels = api.nodes.get("node-a")!.metadata.labels!;
  assert.equal(labels["kubernetes.io/os"], "linux");
  assert.equal(labels["kubernetes.io/arch"], "amd64");
  assert.equal(labels.team, "blue");
  // Right again: nothing more to send.
  await clock.advance(10_000);
  assert.equal(patches(api).length, before + 1);
  stop.abort();
  await running;
});

Deno.test("NodeStatusReporter.run() backs off registration from 100 ms and keeps going after update failures", async () => {
  const { api, clock, current, reporter } = setup();
  const boom = () => new ApiStatusError("boom", { code: 500 });
  api.injectError("createNode", boom());
  api.injectError("createNode", boom());
  const stop = new AbortController();
  const running = reporter.run(stop.signal);
  await clock.advance(0);
  assert.equal(api.nodes.size, 0);
  await clock.advance(100);
  assert.equal(api.nodes.size, 0);
  await clock.advance(200);
  assert.equal(api.nodes.size, 1);
  assert.equal(patches(api).length, 1);
  // A change meets five failed tries in one round (each try reads the Node first, as
  // upstream's tryUpdateNodeStatus does); the next round patches it.
  current.facts.cpuCores = 4;
  for (let i = 0; i < 5; i++) api.injectError("patchNodeStatus", boom());
  const gets = api.calls.filter((c) => c.method === "getNode").length;
  await clock.advance(10_000);
  assert.equal(patches(api).length, 6);
  assert.equal(
    api.calls.filter((c) => c.method === "getNode").length,
    gets + 5,
  );
  assert.equal(api.nodes.get("node-a")!.status?.capacity?.cpu, "2");
  await clock.advance(10_000);
  assert.equal(patches(api).length, 7);
  assert.equal(api.nodes.get("node-a")!.status?.capacity?.cpu, "4");
  stop.abort();
  await running;
});

Deno.test("NodeStatusReporter keeps an extended resource patched into capacity and reports it allocatable", async () => {
  const { api, clock, reporter } = setup();
  const stop = new AbortController();
  const running = reporter.run(stop.signal);
  await clock.advance(0);
  const stored = api.nodes.get("node-a")!;
  stored.status = {
    ...stored.status,
    capacity: { ...stored.status?.capacity, "example.com/foo": "4" },
  };
  await clock.advance(10_000);
  const status = api.nodes.get("node-a")!.status!;
  assert.equal(status.capacity?.["example.com/foo"], "4");
  assert.equal(status.allocatable?.["example.com/foo"], "4");
  assert.equal(status.capacity?.cpu, "2");
  assert.equal(reporter.node?.status?.allocatable?.["example.com/foo"], "4");
  stop.abort();
  await running;
});

Deno.test("NodeStatusReporter records node events as the status setters compute transitions", async () => {
  const { clock, current, reporter, events } = setup();
  current.facts.runtimeConditions![1]!.status = false;
  const stop = new AbortController();
  const running = reporter.run(stop.signal);
  await clock.advance(0);
  assert.deepEqual(events, [
    "Normal NodeHasSufficientMemory: Node node-a status is now: NodeHasSufficientMemory",
    "Normal NodeHasNoDiskPressure: Node node-a status is now: NodeHasNoDiskPressure",
    "Normal NodeHasSufficientPID: Node node-a status is now: NodeHasSufficientPID",
  ]);
  current.facts.runtimeConditions![1]!.status = true;
  await clock.advance(10_000);
  assert.equal(
    events.at(-1),
    "Normal NodeReady: Node node-a status is now: NodeReady",
  );
  assert.equal(events.length, 4);
  stop.abort();
  await running;
});

Deno.test("NodeStatusReporter registers the Node NotReady and reports it Ready right after", async () => {
  const { api, clock, reporter, events } = setup();
  const stop = new AbortController();
  const running = reporter.run(stop.signal);
  await clock.advance(0);
  const created = api.calls.find((c) => c.method === "createNode")!
    .body as {
      status: {
        conditions: { type: string; status: string; message?: string }[];
      };
    };
  const ready = created.status.conditions.find((c) => c.type === "Ready")!;
  assert.equal(ready.status, "False");
  assert.equal(
    ready.message,
    "container runtime status check may not have completed yet",
  );
  assert.equal(
    api.nodes.get("node-a")!.status?.conditions?.at(-1)?.status,
    "True",
  );
  assert.equal(
    events.at(-1),
    "Normal NodeReady: Node node-a status is now: NodeReady",
  );
  stop.abort();
  await running;
});

Deno.test("NodeStatusReporter.node is the locally built Node while the API server cannot be reached, then the API server's", async () => {
  const { api, clock, reporter } = setup();
  const node = () => reporter.node;
  api.injectError("createNode", new ApiStatusError("down", { code: 503 }));
  assert.equal(node(), undefined);
  // what joinCluster builds before the kubelet admits its first (static) pod
  await reporter.localNode(new AbortController().signal);
  assert.equal(node()?.status?.allocatable?.cpu, "2");
  const stop = new AbortController();
  const running = reporter.run(stop.signal);
  await clock.advance(0);
  assert.equal(api.nodes.size, 0);
  // admission reads allocatable and labels from it; it has no UID (nothing can own by it)
  assert.equal(node()?.status?.allocatable?.cpu, "2");
  assert.equal(
    node()?.metadata.labels?.["kubernetes.io/hostname"],
    "node-a",
  );
  assert.equal(reporter.nodeUid, undefined);
  await clock.advance(100);
  assert.equal(
    node()?.metadata.uid,
    api.nodes.get("node-a")!.metadata.uid,
  );
  assert.ok(reporter.nodeUid);
  stop.abort();
  await running;
});
