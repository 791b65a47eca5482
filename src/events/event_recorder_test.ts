import assert from "node:assert/strict";
import { ApiStatusError } from "../api/mod.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createEventRecorder } from "./event_recorder.ts";
import { FakeEventSink } from "./testing.ts";

const node = { kind: "Node", name: "n1", uid: "n1" };

function setup(options: { maxQueued?: number } = {}) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const sink = new FakeEventSink();
  const logger = new CaptureLogger();
  const rec = createEventRecorder({ sink, clock, logger, random: () => 0 }, {
    component: "kubelet",
    host: "n1",
    ...options,
  });
  const stop = new AbortController();
  return { clock, sink, logger, rec, stop, running: rec.run(stop.signal) };
}

Deno.test("an event is posted in the object's namespace with source and reporting fields", async () => {
  const { sink, rec, stop, running } = setup();
  rec.event(node, "Normal", "Starting", "Starting kubelet.");
  rec.event(
    {
      kind: "Pod",
      apiVersion: "v1",
      namespace: "kube-system",
      name: "web-n1",
      uid: "u1",
      fieldPath: "spec.containers{app}",
    },
    "Normal",
    "Pulled",
    'Container image "busybox" already present on machine',
  );
  await rec.whenIdle();
  const [a, b] = [...sink.events.values()];
  assert.equal(a!.metadata.namespace, "default");
  assert.match(a!.metadata.name, /^n1\.[0-9a-f]+$/);
  assert.deepEqual(a!.source, { component: "kubelet", host: "n1" });
  assert.equal(a!.reportingComponent, "kubelet");
  assert.equal(a!.reportingInstance, "n1");
  assert.equal(a!.firstTimestamp, "2026-01-01T00:00:00Z");
  assert.equal(b!.metadata.namespace, "kube-system");
  assert.equal(b!.involvedObject.fieldPath, "spec.containers{app}");
  stop.abort();
  await running;
});

Deno.test("a repeated event is patched; a patch of a deleted event becomes a create", async () => {
  const { sink, rec, stop, running, clock } = setup();
  rec.event(node, "Normal", "NodeReady", "Node n1 status is now: NodeReady");
  await rec.whenIdle();
  await clock.advance(5_000);
  rec.event(node, "Normal", "NodeReady", "Node n1 status is now: NodeReady");
  await rec.whenIdle();
  assert.deepEqual(sink.calls.map((c) => c.method), ["create", "patch"]);
  assert.deepEqual(sink.calls[1]!.body, {
    count: 2,
    lastTimestamp: "2026-01-01T00:00:05Z",
    message: "Node n1 status is now: NodeReady",
  });
  sink.events.clear();
  rec.event(node, "Normal", "NodeReady", "Node n1 status is now: NodeReady");
  await rec.whenIdle();
  assert.deepEqual(sink.calls.map((c) => c.method), [
    "create",
    "patch",
    "patch",
    "create",
  ]);
  assert.equal([...sink.events.values()][0]!.count, 3);
  stop.abort();
  await running;
});

Deno.test("a write that cannot reach the server is retried; a rejected one is dropped", async () => {
  const { sink, rec, stop, running, clock } = setup();
  sink.injectError(new TypeError("connection refused"));
  rec.event(node, "Normal", "Starting", "Starting kubelet.");
  await clock.advance(0);
  await new Promise((r) => setTimeout(r, 0));
  await clock.advance(10_000);
  await rec.whenIdle();
  assert.equal(sink.calls.length, 2);
  assert.equal(sink.events.size, 1);
  sink.injectError(new ApiStatusError("forbidden", { code: 403 }));
  rec.event(node, "Warning", "Other", "x");
  await rec.whenIdle();
  assert.equal(sink.calls.length, 3);
  assert.equal(sink.events.size, 1);
  stop.abort();
  await running;
});

Deno.test("recording never waits: beyond the queue's capacity events are dropped with a log", () => {
  const clock = new FakeClock(0);
  const sink = new FakeEventSink();
  const logger = new CaptureLogger();
  const rec = createEventRecorder({ sink, clock, logger }, {
    component: "kubelet",
    host: "n1",
    maxQueued: 2,
  });
  for (let i = 0; i < 4; i++) rec.event(node, "Normal", "R", `m${i}`);
  const dropped = logger.records.filter((r) =>
    r.msg.startsWith("Unable to record event: too many queued events")
  );
  assert.equal(dropped.length, 2);
});
