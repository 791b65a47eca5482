import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { PodLifecycleEvent } from "./pleg.ts";
import { PodWorkers } from "./pod_workers.ts";
import {
  dispatch,
  type LoopEvent,
  LoopEventQueue,
  PodSyncHandler,
  runSyncLoop,
  type SyncHandler,
} from "./sync_loop.ts";
import type { RunningPod } from "./runtime_pods.ts";
import type { Pod, PodSyncer } from "../types.ts";

function pod(uid: string): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: "default", uid },
    spec: { containers: [{ name: "c", image: "i" }] },
  };
}

function recordingHandler(log: string[]): SyncHandler {
  const names = (pods: Pod[]) => pods.map((p) => p.metadata.uid).join(",");
  return {
    handlePodAdditions: (p) => void log.push(`add ${names(p)}`),
    handlePodUpdates: (p) => void log.push(`update ${names(p)}`),
    handlePodRemoves: (p) => void log.push(`remove ${names(p)}`),
    handlePodSet: (p) => void log.push(`set ${names(p)}`),
    handlePodReconcile: (p) => void log.push(`reconcile ${names(p)}`),
    handlePlegEvent: (e) => void log.push(`pleg ${e.type} ${e.podUid}`),
    handleProbeResult: (uid) => void log.push(`probe ${uid}`),
    handleResync: () => void log.push("resync"),
    handleHousekeeping: () => {
      log.push("housekeeping");
      return Promise.resolve();
    },
  };
}

Deno.test("dispatch() routes every event kind to its handler method", async () => {
  const log: string[] = [];
  const handler = recordingHandler(log);
  const events: LoopEvent[] = [
    { kind: "config", update: { op: "ADD", source: "file", pods: [pod("a")] } },
    {
      kind: "config",
      update: { op: "UPDATE", source: "file", pods: [pod("a")] },
    },
    {
      kind: "config",
      update: { op: "REMOVE", source: "file", pods: [pod("a")] },
    },
    { kind: "config", update: { op: "SET", source: "file", pods: [pod("b")] } },
    {
      kind: "config",
      update: { op: "RECONCILE", source: "api", pods: [pod("b")] },
    },
    { kind: "pleg", event: { type: "ContainerDied", podUid: "b", id: "c1" } },
    { kind: "probe", podUid: "b" },
    { kind: "resync" },
    { kind: "housekeeping" },
  ];
  for (const e of events) await dispatch(e, handler);
  assert.deepEqual(log, [
    "add a",
    "update a",
    "remove a",
    "set b",
    "reconcile b",
    "pleg ContainerDied b",
    "probe b",
    "resync",
    "housekeeping",
  ]);
});

Deno.test("LoopEventQueue keeps order and queues a tick kind at most once", async () => {
  const q = new LoopEventQueue();
  q.push({ kind: "resync" });
  q.push({ kind: "resync" });
  q.push({
    kind: "pleg",
    event: { type: "ContainerStarted", podUid: "a", id: "c" },
  });
  q.push({ kind: "housekeeping" });
  assert.equal(q.size, 3);
  const ac = new AbortController();
  assert.equal((await q.next(ac.signal))?.kind, "resync");
  assert.equal((await q.next(ac.signal))?.kind, "pleg");
  assert.equal((await q.next(ac.signal))?.kind, "housekeeping");
  const pending = q.next(ac.signal);
  ac.abort();
  assert.equal(await pending, undefined);
});

Deno.test("runSyncLoop() consumes queued events and ticks resync and housekeeping on the clock", async () => {
  const log: string[] = [];
  const queue = new LoopEventQueue();
  const clock = new FakeClock();
  const ac = new AbortController();
  const running = runSyncLoop(
    {
      queue,
      handler: recordingHandler(log),
      clock,
      logger: new CaptureLogger(),
    },
    { signal: ac.signal, resyncPeriodMs: 1000, housekeepingPeriodMs: 2000 },
  );
  queue.push({
    kind: "config",
    update: { op: "ADD", source: "file", pods: [pod("a")] },
  });
  await clock.advance(0);
  assert.deepEqual(log, ["add a"]);
  await clock.advance(2000);
  assert.deepEqual(log.filter((l) => l === "resync").length, 2);
  assert.deepEqual(log.filter((l) => l === "housekeeping").length, 1);
  ac.abort();
  await running;
});

function handlerWithWorkers(ready: { value: boolean }) {
  const synced: string[] = [];
  const gc: string[][] = [];
  const running: RunningPod[] = [];
  const syncer: PodSyncer = {
    syncPod: (w) => {
      synced.push(`sync ${w.pod.metadata.uid} ${w.updateType}`);
      return Promise.resolve({ terminal: false });
    },
    syncTerminatingPod: (w) => {
      synced.push(`terminating ${w.pod.metadata.uid}`);
      return Promise.resolve();
    },
    syncTerminatedPod: (w) => {
      synced.push(`terminated ${w.pod.metadata.uid}`);
      return Promise.resolve();
    },
    syncTerminatingRuntimePod: async (w, signal) => {
      synced.push(`orphan ${w.pod.metadata.uid} grace ${w.gracePeriodSeconds}`);
      // a stop that takes its grace period (2 s minimum per container)
      await clock.sleep(2_000, signal);
      synced.push(`orphan ${w.pod.metadata.uid} stopped`);
    },
  };
  const clock = new FakeClock();
  const workers = new PodWorkers(
    { syncer, clock, logger: new CaptureLogger() },
    { random: () => 0 },
  );
  const handler = new PodSyncHandler({
    workers,
    clock,
    logger: new CaptureLogger(),
    allSourcesReady: () => ready.value,
    listRunningPods: () => {
      gc.push(running.map((p) => p.uid));
      return Promise.resolve([...running]);
    },
  });
  return { handler, workers, synced, gc, clock, running };
}

Deno.test("PodSyncHandler syncs known pods on PLEG events and ignores unknown pods and removals", async () => {
  const { handler, workers, synced } = handlerWithWorkers({ value: true });
  await using _ = workers;
  handler.handlePodAdditions([pod("a")]);
  await workers.whenIdle();
  const ev = (
    type: PodLifecycleEvent["type"],
    podUid: string,
  ): PodLifecycleEvent => ({ type, podUid, id: "x" });
  handler.handlePlegEvent(ev("ContainerDied", "a"));
  await workers.whenIdle();
  handler.handlePlegEvent(ev("ContainerRemoved", "a"));
  handler.handlePlegEvent(ev("ContainerStarted", "unknown"));
  await workers.whenIdle();
  assert.deepEqual(synced, ["sync a create", "sync a sync"]);
});

Deno.test("PodSyncHandler.handleProbeResult() syncs a known pod and ignores unknown ones", async () => {
  const { handler, workers, synced } = handlerWithWorkers({ value: true });
  await using _ = workers;
  handler.handlePodAdditions([pod("a")]);
  await workers.whenIdle();
  handler.handleProbeResult("a");
  handler.handleProbeResult("unknown");
  await workers.whenIdle();
  assert.deepEqual(synced, ["sync a create", "sync a sync"]);
});

Deno.test("PodSyncHandler.handlePodReconcile() syncs a pod only when a readiness gate changed its Ready", async () => {
  const { handler, workers, synced } = handlerWithWorkers({ value: true });
  await using _ = workers;
  const gated = (gate: "True" | "False", ready: "True" | "False"): Pod => ({
    ...pod("a"),
    spec: {
      ...pod("a").spec,
      readinessGates: [{ conditionType: "example.com/gate" }],
    },
    status: {
      conditions: [
        { type: "ContainersReady", status: "True" },
        { type: "Ready", status: ready },
        { type: "example.com/gate", status: gate },
      ],
    },
  });
  handler.handlePodAdditions([pod("a")]);
  await workers.whenIdle();
  // an echo of our own status, and a pod without gates: nothing to do
  handler.handlePodReconcile([pod("a"), gated("True", "True")]);
  handler.handlePodReconcile([pod("unknown")]);
  await workers.whenIdle();
  assert.deepEqual(synced, ["sync a create"]);
  // the gate turned True while Ready is still False
  handler.handlePodReconcile([gated("True", "False")]);
  await workers.whenIdle();
  assert.deepEqual(synced, ["sync a create", "sync a sync"]);
});

Deno.test("PodSyncHandler.handlePodRemoves() stops liveness and startup probing of the pod", async () => {
  const stopped: string[] = [];
  const clock = new FakeClock();
  const syncer: PodSyncer = {
    syncPod: () => Promise.resolve({ terminal: false }),
    syncTerminatingPod: () => Promise.resolve(),
    syncTerminatedPod: () => Promise.resolve(),
  };
  await using workers = new PodWorkers(
    { syncer, clock, logger: new CaptureLogger() },
    { random: () => 0 },
  );
  const handler = new PodSyncHandler({
    workers,
    clock,
    logger: new CaptureLogger(),
    allSourcesReady: () => true,
    prober: {
      stopLivenessAndStartup: (uid) => {
        stopped.push(uid);
        return Promise.resolve();
      },
    },
  });
  handler.handlePodAdditions([pod("a"), pod("b")]);
  handler.handlePodRemoves([pod("a")]);
  await workers.whenIdle();
  assert.deepEqual(stopped, ["a"]);
});

Deno.test("PodSyncHandler.handleHousekeeping() hands orphans to pod workers only after every source reported", async () => {
  const ready = { value: false };
  const { handler, workers, synced, gc, running, clock } = handlerWithWorkers(
    ready,
  );
  await using _ = workers;
  handler.handlePodAdditions([pod("a"), pod("b")]);
  await workers.whenIdle();
  running.push(
    { uid: "a", name: "a", namespace: "default" },
    { uid: "orphan", name: "old", namespace: "default" },
  );
  await handler.handleHousekeeping();
  assert.deepEqual(gc, [], "the runtime is not even listed before then");
  ready.value = true;
  handler.handlePodRemoves([pod("b")]);
  await workers.whenIdle();
  await handler.handleHousekeeping();
  assert.deepEqual(gc, [["a", "orphan"]]);
  assert.ok(synced.includes("terminated b"));
  assert.equal(workers.phaseOf("orphan"), "terminating");
  // listed again while it stops: its worker already handles it
  await handler.handleHousekeeping();
  assert.equal(synced.filter((s) => s === "orphan orphan grace 1").length, 1);
  await clock.advance(2_000);
  await workers.whenIdle();
  assert.ok(synced.includes("orphan orphan grace 1"));
  assert.ok(synced.includes("orphan orphan stopped"));
  assert.ok(!synced.some((s) => s.startsWith("sync orphan")));
  assert.ok(!synced.includes("terminated orphan"), "orphans finish at once");
  assert.equal(workers.phaseOf("orphan"), "finished");
  assert.equal(workers.shouldPodContentBeRemoved("orphan"), true);
});

Deno.test("PodSyncHandler.handleHousekeeping() returns before the orphans have stopped", async () => {
  // upstream HandlePodCleanups only dispatches the kills; the old code awaited every stop
  const { handler, workers, synced, running } = handlerWithWorkers({
    value: true,
  });
  await using _ = workers;
  for (let i = 0; i < 10; i++) {
    running.push({ uid: `o${i}`, name: `old${i}`, namespace: "default" });
  }
  await handler.handleHousekeeping(); // the fake clock never moves: stops cannot finish
  assert.equal(
    synced.filter((s) => s.startsWith("orphan") && s.endsWith("grace 1"))
      .length,
    10,
    "every orphan is being stopped in parallel",
  );
  assert.equal(synced.filter((s) => s.endsWith("stopped")).length, 0);
  handler.handlePodAdditions([pod("new")]);
  await new Promise((r) => setTimeout(r, 0));
  assert.ok(synced.includes("sync new create"), "a new pod starts meanwhile");
});

Deno.test("PodSyncHandler.handleResync() re-syncs pods whose requeue time passed, with the latest spec", async () => {
  const { handler, workers, synced, clock } = handlerWithWorkers({
    value: true,
  });
  await using _ = workers;
  handler.handlePodAdditions([pod("a")]);
  await workers.whenIdle();
  handler.handleResync();
  await workers.whenIdle();
  assert.equal(synced.length, 1);
  await clock.advance(60_000);
  handler.handleResync();
  await workers.whenIdle();
  assert.deepEqual(synced, ["sync a create", "sync a sync"]);
});

Deno.test("PodSyncHandler.handlePodSet() adds, updates and removes against the known pods", async () => {
  const { handler, workers, synced } = handlerWithWorkers({ value: true });
  await using _ = workers;
  handler.handlePodSet([pod("a"), pod("b")]);
  await workers.whenIdle();
  handler.handlePodSet([pod("b")]);
  await workers.whenIdle();
  assert.deepEqual(handler.pods().map((p) => p.metadata.uid), ["b"]);
  assert.ok(synced.includes("terminating a"));
  assert.ok(synced.includes("sync b update"));
});
