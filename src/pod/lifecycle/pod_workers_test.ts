import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { effectiveGrace, PodWorkers } from "./pod_workers.ts";
import type { Pod, PodSyncer, PodWork } from "../types.ts";

function pod(
  uid: string,
  extra: { name?: string; image?: string; grace?: number } = {},
): Pod {
  return {
    metadata: { name: extra.name ?? `p-${uid}`, namespace: "default", uid },
    spec: {
      containers: [{ name: "c", image: extra.image ?? "img:1" }],
      ...(extra.grace !== undefined
        ? { terminationGracePeriodSeconds: extra.grace }
        : {}),
    },
  };
}

interface Call {
  method: "sync" | "terminating" | "terminated";
  uid: string;
  image: string;
  grace?: number | undefined;
  signal: AbortSignal;
}

/** A closure syncer with a call log; `gate` (when set) holds every call until released. */
function recorder(
  opts: { terminal?: (w: PodWork) => boolean; fail?: (c: Call) => boolean } =
    {},
) {
  const calls: Call[] = [];
  let gate: Promise<void> | undefined;
  let release: () => void = () => {};
  const enter = async (
    method: Call["method"],
    w: PodWork,
    signal: AbortSignal,
  ) => {
    const call: Call = {
      method,
      uid: w.pod.metadata.uid!,
      image: w.pod.spec.containers[0]!.image!,
      grace: w.gracePeriodSeconds,
      signal,
    };
    calls.push(call);
    if (gate) {
      await Promise.race([
        gate,
        new Promise((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), {
            once: true,
          })
        ),
      ]);
    }
    if (opts.fail?.(call)) throw new Error(`runtime unavailable`);
  };
  const syncer: PodSyncer = {
    syncPod: async (w, s) => {
      await enter("sync", w, s);
      return { terminal: opts.terminal?.(w) ?? false };
    },
    syncTerminatingPod: (w, s) => enter("terminating", w, s),
    syncTerminatedPod: (w, s) => enter("terminated", w, s),
  };
  return {
    syncer,
    calls,
    hold() {
      gate = new Promise<void>((r) => (release = r));
    },
    release() {
      gate = undefined;
      release();
    },
  };
}

function setup(rec: ReturnType<typeof recorder>, clock = new FakeClock()) {
  const workers = new PodWorkers(
    { syncer: rec.syncer, clock, logger: new CaptureLogger() },
    { resyncIntervalMs: 60_000, backOffPeriodMs: 10_000, random: () => 0 },
  );
  return { workers, clock };
}

const summary = (calls: Call[]) =>
  calls.map((c) =>
    `${c.method} ${c.uid} ${c.image}${
      c.grace !== undefined ? ` g${c.grace}` : ""
    }`
  );

Deno.test("PodWorkers.updatePod() syncs a new pod once and requeues it after syncFrequency", async () => {
  const rec = recorder();
  const { workers, clock } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  await workers.whenIdle();
  assert.deepEqual(summary(rec.calls), ["sync a img:1"]);
  assert.equal(workers.phaseOf("a"), "syncing");
  assert.deepEqual(workers.duePods(clock.now() + 59_999), []);
  assert.deepEqual(
    workers.duePods(clock.now() + 60_000).map((p) => p.metadata.uid),
    ["a"],
  );
});

Deno.test("PodWorkers keeps only the latest pending update while a sync runs", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  rec.hold();
  workers.updatePod({
    pod: pod("a", { image: "img:1" }),
    updateType: "create",
  });
  workers.updatePod({
    pod: pod("a", { image: "img:2" }),
    updateType: "update",
  });
  workers.updatePod({
    pod: pod("a", { image: "img:3" }),
    updateType: "update",
  });
  rec.release();
  await workers.whenIdle();
  assert.deepEqual(summary(rec.calls), ["sync a img:1", "sync a img:3"]);
});

Deno.test("PodWorkers aborts an in-flight sync on kill, then terminates and finishes the pod", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  rec.hold();
  workers.updatePod({ pod: pod("a", { grace: 5 }), updateType: "create" });
  await new Promise((r) => setTimeout(r, 0));
  workers.updatePod({ pod: pod("a", { grace: 5 }), updateType: "kill" });
  assert.equal(rec.calls[0]!.signal.aborted, true);
  rec.release();
  await workers.whenIdle();
  assert.deepEqual(summary(rec.calls), [
    "sync a img:1",
    "terminating a img:1 g5",
    "terminated a img:1",
  ]);
  assert.equal(workers.phaseOf("a"), "finished");
  // A finished UID never syncs again.
  workers.updatePod({ pod: pod("a"), updateType: "sync" });
  await workers.whenIdle();
  assert.equal(rec.calls.length, 3);
});

Deno.test("PodWorkers terminates a pod whose sync reports a terminal phase", async () => {
  const rec = recorder({ terminal: () => true });
  const { workers } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("n", { grace: 7 }), updateType: "create" });
  await workers.whenIdle();
  assert.deepEqual(summary(rec.calls), [
    "sync n img:1",
    "terminating n img:1 g7",
    "terminated n img:1",
  ]);
});

Deno.test("PodWorkers requeues a failed sync after the back-off period", async () => {
  let failures = 1;
  const rec = recorder({ fail: () => failures-- > 0 });
  const { workers, clock } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  await workers.whenIdle();
  assert.deepEqual(workers.duePods(clock.now() + 9_999), []);
  const due = workers.duePods(clock.now() + 10_000);
  assert.equal(due.length, 1);
  workers.updatePod({ pod: due[0]!, updateType: "sync" });
  await workers.whenIdle();
  assert.equal(rec.calls.length, 2);
  assert.deepEqual(workers.duePods(clock.now() + 10_000), []);
});

Deno.test("PodWorkers retries a failed termination and never returns to syncing", async () => {
  let failures = 1;
  const rec = recorder({
    fail: (c) => c.method === "terminating" && failures-- > 0,
  });
  const { workers, clock } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  workers.updatePod({ pod: pod("a"), updateType: "kill" });
  await workers.whenIdle();
  assert.equal(workers.phaseOf("a"), "terminating");
  for (const p of workers.duePods(clock.now() + 15_000)) {
    workers.updatePod({ pod: p, updateType: "sync" });
  }
  await workers.whenIdle();
  assert.equal(workers.phaseOf("a"), "finished");
  assert.deepEqual(
    rec.calls.map((c) => c.method).filter((m) => m === "sync").length <= 1,
    true,
  );
  assert.deepEqual(rec.calls.map((c) => c.method).slice(-3), [
    "terminating",
    "terminating",
    "terminated",
  ]);
});

Deno.test("PodWorkers starts a pod with the same full name only after the old UID finished", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("old", { name: "web" }), updateType: "create" });
  await workers.whenIdle();
  rec.hold();
  workers.updatePod({ pod: pod("old", { name: "web" }), updateType: "kill" });
  workers.updatePod({
    pod: pod("new", { name: "web", image: "img:2" }),
    updateType: "create",
  });
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(summary(rec.calls).slice(1), ["terminating old img:1 g30"]);
  rec.release();
  await workers.whenIdle();
  assert.deepEqual(summary(rec.calls).slice(1), [
    "terminating old img:1 g30",
    "terminated old img:1",
    "sync new img:2",
  ]);
});

Deno.test("PodWorkers.isTerminatingByFullName() is true only while a known pod of that name is being killed", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("a", { name: "web" }), updateType: "create" });
  await workers.whenIdle();
  assert.equal(workers.isTerminatingByFullName("default/web"), false);
  rec.hold();
  workers.updatePod({ pod: pod("a", { name: "web" }), updateType: "kill" });
  // an orphan only the runtime knows does not hold a mirror pod back
  workers.updatePod({
    pod: pod("orphan", { name: "db" }),
    updateType: "kill",
    runtimeOnly: true,
  });
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(workers.isTerminatingByFullName("default/web"), true);
  assert.equal(workers.isTerminatingByFullName("default/other"), false);
  assert.equal(workers.isTerminatingByFullName("default/db"), false);
  rec.release();
  await workers.whenIdle();
  assert.equal(workers.phaseOf("a"), "finished");
  assert.equal(workers.isTerminatingByFullName("default/web"), false);
});

Deno.test("PodWorkers restarts termination when the grace period is shortened", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  rec.hold();
  workers.updatePod({ pod: pod("a", { grace: 30 }), updateType: "kill" });
  await new Promise((r) => setTimeout(r, 0));
  workers.updatePod({
    pod: pod("a", { grace: 30 }),
    updateType: "kill",
    gracePeriodSeconds: 2,
  });
  rec.release();
  await workers.whenIdle();
  assert.deepEqual(summary(rec.calls), [
    "terminating a img:1 g30",
    "terminating a img:1 g2",
    "terminated a img:1",
  ]);
});

Deno.test("PodWorkers.syncKnownPods() kills undesired pods and forgets finished ones", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  workers.updatePod({ pod: pod("b"), updateType: "create" });
  await workers.whenIdle();
  workers.syncKnownPods(new Set(["a"]));
  await workers.whenIdle();
  assert.equal(workers.phaseOf("b"), "finished");
  assert.deepEqual([...workers.activeUids()], ["a"]);
  workers.syncKnownPods(new Set(["a"]));
  assert.equal(workers.phaseOf("b"), undefined);
  // A forgotten UID can start again.
  workers.updatePod({ pod: pod("b"), updateType: "create" });
  await workers.whenIdle();
  assert.equal(workers.phaseOf("b"), "syncing");
});

Deno.test("PodWorkers.stop() aborts in-flight calls and ignores later updates", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  rec.hold();
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  await new Promise((r) => setTimeout(r, 0));
  await workers.stop();
  assert.equal(rec.calls[0]!.signal.aborted, true);
  workers.updatePod({ pod: pod("b"), updateType: "create" });
  await workers.stop();
  assert.equal(rec.calls.length, 1);
});

Deno.test("effectiveGrace() only lowers, prefers deletion grace, never goes below 1", () => {
  const p = pod("a", { grace: 30 });
  assert.equal(effectiveGrace(undefined, { pod: p, updateType: "kill" }), 30);
  assert.equal(
    effectiveGrace(undefined, { pod: pod("a"), updateType: "kill" }),
    30,
  );
  const deleting: Pod = {
    ...p,
    metadata: { ...p.metadata, deletionGracePeriodSeconds: 10 },
  };
  assert.equal(
    effectiveGrace(undefined, { pod: deleting, updateType: "kill" }),
    10,
  );
  assert.equal(effectiveGrace(5, { pod: deleting, updateType: "kill" }), 5);
  assert.equal(
    effectiveGrace(30, { pod: p, updateType: "kill", gracePeriodSeconds: 3 }),
    3,
  );
  assert.equal(
    effectiveGrace(undefined, {
      pod: p,
      updateType: "kill",
      gracePeriodSeconds: 0,
    }),
    1,
  );
  assert.equal(effectiveGrace(20, { pod: p, updateType: "kill" }), 20);
});

Deno.test("PodWorkers requeues at the sync's retryAfterMs when it is sooner than the resync", async () => {
  const clock = new FakeClock();
  const syncer: PodSyncer = {
    syncPod: () => Promise.resolve({ terminal: false, retryAfterMs: 20_000 }),
    syncTerminatingPod: () => Promise.resolve(),
    syncTerminatedPod: () => Promise.resolve(),
  };
  await using workers = new PodWorkers(
    { syncer, clock, logger: new CaptureLogger() },
    { resyncIntervalMs: 60_000, random: () => 0 },
  );
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  await workers.whenIdle();
  assert.deepEqual(workers.duePods(clock.now() + 19_999), []);
  assert.equal(workers.duePods(clock.now() + 20_000).length, 1);
});

Deno.test("PodWorkers.syncKnownPods() restarts a finished UID that was created again", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  workers.updatePod({ pod: pod("a"), updateType: "kill" });
  await workers.whenIdle();
  assert.equal(workers.phaseOf("a"), "finished");
  workers.updatePod({
    pod: pod("a", { image: "img:2" }),
    updateType: "create",
  });
  await workers.whenIdle();
  assert.equal(workers.phaseOf("a"), "finished");
  workers.syncKnownPods(new Set(["a"]));
  await workers.whenIdle();
  assert.equal(workers.phaseOf("a"), "syncing");
  assert.equal(summary(rec.calls).at(-1), "sync a img:2");
});

Deno.test("PodWorkers.syncKnownPods() restarts a UID created again while it was terminating", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  await workers.whenIdle();
  rec.hold();
  workers.updatePod({ pod: pod("a"), updateType: "kill" });
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(workers.phaseOf("a"), "terminating");
  workers.updatePod({
    pod: pod("a", { image: "img:2" }),
    updateType: "create",
  });
  rec.release();
  await workers.whenIdle();
  assert.equal(workers.phaseOf("a"), "finished");
  workers.syncKnownPods(new Set(["a"]));
  await workers.whenIdle();
  assert.equal(workers.phaseOf("a"), "syncing");
  assert.equal(summary(rec.calls).at(-1), "sync a img:2");
});

Deno.test("PodWorkers stops when its signal aborts", async () => {
  const rec = recorder();
  const ac = new AbortController();
  const workers = new PodWorkers(
    { syncer: rec.syncer, clock: new FakeClock(), logger: new CaptureLogger() },
    { signal: ac.signal },
  );
  rec.hold();
  workers.updatePod({ pod: pod("a"), updateType: "create" });
  await new Promise((r) => setTimeout(r, 0));
  ac.abort();
  assert.equal(rec.calls[0]!.signal.aborted, true);
  await workers.whenIdle();
  workers.updatePod({ pod: pod("b"), updateType: "create" });
  assert.equal(rec.calls.length, 1);
});

Deno.test("PodWorkers.shouldPodContentBeRemoved() frees a finished pod's content only once it is deleted or forgotten", async () => {
  // upstream ShouldPodContentBeRemoved: evicted, or deleted and terminated; unknown UIDs only
  // after the first SyncKnownPods
  const rec = recorder({ terminal: () => true });
  const { workers } = setup(rec);
  await using _ = workers;
  assert.equal(workers.shouldPodContentBeRemoved("x"), false, "not synced yet");
  workers.updatePod({ pod: pod("done"), updateType: "create" });
  const deleted = pod("del");
  deleted.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  workers.updatePod({ pod: deleted, updateType: "create" });
  await workers.whenIdle();
  assert.equal(workers.phaseOf("done"), "finished");
  assert.equal(workers.shouldPodContentBeRemoved("done"), false);
  assert.equal(workers.shouldPodRuntimeBeRemoved("done"), true);
  assert.equal(workers.shouldPodContentBeRemoved("del"), true);
  workers.syncKnownPods(new Set(["done", "del"]));
  assert.equal(
    workers.shouldPodContentBeRemoved("done"),
    false,
    "still desired",
  );
  assert.equal(workers.shouldPodContentBeRemoved("x"), true, "unknown");
  workers.syncKnownPods(new Set(["del"]));
  assert.equal(workers.has("done"), false);
  assert.equal(workers.shouldPodContentBeRemoved("done"), true, "forgotten");
});

Deno.test("PodWorkers.updatePod() stops a runtime-only pod without a terminated step and never makes a static pod wait for it", async () => {
  const rec = recorder();
  const { workers } = setup(rec);
  await using _ = workers;
  const orphan = pod("old", { name: "web" });
  workers.updatePod({
    pod: orphan,
    updateType: "kill",
    runtimeOnly: true,
    gracePeriodSeconds: 1,
  });
  workers.updatePod({ pod: pod("new", { name: "web" }), updateType: "create" });
  await workers.whenIdle();
  assert.deepEqual(summary(rec.calls).sort(), [
    "sync new img:1",
    "terminating old img:1 g1",
  ]);
  assert.equal(workers.phaseOf("old"), "finished");
  assert.equal(workers.shouldPodContentBeRemoved("old"), true);
});
