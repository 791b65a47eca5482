import assert from "node:assert/strict";
import type { Pod } from "../api/mod.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import {
  createNodeShutdownManager,
  type NodeShutdownDeps,
} from "./shutdown_manager.ts";
import {
  GO_ZERO_TIME,
  NODE_SHUTDOWN_ADMIT_REASON,
  NODE_SHUTTING_DOWN_ERROR,
  type ShutdownState,
} from "./shutdown_plan.ts";
import { FakeLogind } from "./testing.ts";

function pod(name: string, priority?: number, grace?: number): Pod {
  return {
    metadata: { name, namespace: "default", uid: name },
    spec: {
      containers: [],
      ...(priority !== undefined ? { priority } : {}),
      ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
    },
  } as Pod;
}

const GROUPS = [
  { priority: 0, gracePeriodSeconds: 20 },
  { priority: 2_000_000_000, gracePeriodSeconds: 10 },
];

/** A node with pods whose kills finish when the test says so. */
function setup(pods: Pod[], options: { storeState?: boolean } = {}) {
  const logind = new FakeLogind();
  const clock = new FakeClock();
  const kills: { name: string; grace: number; at: number }[] = [];
  const pending = new Map<string, () => void>();
  const states: ShutdownState[] = [];
  const synced: number[] = [];
  const events: string[] = [];
  const deps: NodeShutdownDeps = {
    connect: logind.connect,
    writeInhibitDelay: logind.writeInhibitDelay,
    activePods: () => pods,
    killPod: (p, grace) => {
      kills.push({ name: p.metadata.name!, grace, at: clock.now() });
      return new Promise((resolve) => pending.set(p.metadata.name!, resolve));
    },
    syncNodeStatus: () => synced.push(clock.now()),
    recordEvent: (message) => events.push(message),
    storeState: (state) => {
      states.push(state);
      return Promise.resolve();
    },
    clock,
    logger: new CaptureLogger(),
  };
  const manager = createNodeShutdownManager(deps, {
    groups: GROUPS,
    storeState: options.storeState ?? true,
  });
  const finish = (name: string) => {
    const done = pending.get(name);
    assert.ok(done, `pod ${name} was not being killed`);
    done();
  };
  return { logind, clock, kills, finish, states, synced, events, manager };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

Deno.test("start() raises logind's inhibit delay to the sum of the groups, then takes the lock", async () => {
  const t = setup([]);
  await using _ = t.manager;
  await t.manager.start();
  assert.equal(t.logind.dropInSeconds, 30);
  assert.deepEqual(t.logind.calls, [
    "connect",
    "inhibitDelayMaxMs",
    "writeInhibitDelay",
    "reloadLogind",
    "inhibitDelayMaxMs",
    "inhibitShutdown",
    "watchShutdown",
  ]);
  assert.equal(t.logind.heldLocks().length, 1);
});

Deno.test("start() leaves a delay that is already long enough", async () => {
  const t = setup([]);
  t.logind.inhibitDelayMs = 30_000;
  await using _ = t.manager;
  await t.manager.start();
  assert.equal(t.logind.dropInSeconds, undefined);
  assert.equal(t.logind.heldLocks().length, 1);
});

Deno.test("start() fails without a lock when logind keeps a delay shorter than the period", async () => {
  const t = setup([]);
  t.logind.reloadApplies = false;
  await using _ = t.manager;
  await assert.rejects(
    () => t.manager.start(),
    /unable to update logind InhibitDelayMaxSec to 30s.*current value of InhibitDelayMaxSec \(5s\)/,
  );
  assert.equal(t.logind.locks.length, 0);
  assert.ok(t.logind.connections[0]!.isClosed);
});

Deno.test("a shutdown stops regular pods, then critical pods, then releases the lock", async () => {
  const t = setup([
    pod("critical", 2_000_000_000, 30),
    pod("web", 0, 5),
    pod("batch", 1000, 60),
  ]);
  await using _ = t.manager;
  await t.manager.start();
  const start = t.clock.now();
  t.logind.prepareForShutdown(true);
  await settle();
  assert.equal(t.manager.shutdownError(), NODE_SHUTTING_DOWN_ERROR);
  assert.deepEqual(t.manager.admit(pod("late")), {
    admit: false,
    reason: NODE_SHUTDOWN_ADMIT_REASON,
    message: "Pod was rejected as the node is shutting down.",
  });
  assert.deepEqual(t.synced, [start]);
  assert.deepEqual(t.events, ["Shutdown manager detected shutdown event"]);
  // regular group first: the pod's own 5 s, the group's 20 s for the longer one
  assert.deepEqual(t.kills, [
    { name: "web", grace: 5, at: start },
    { name: "batch", grace: 20, at: start },
  ]);
  await t.clock.advance(3_000);
  t.finish("web");
  t.finish("batch");
  await settle();
  assert.deepEqual(t.kills.at(-1), {
    name: "critical",
    grace: 10,
    at: start + 3_000,
  });
  assert.equal(t.logind.heldLocks().length, 1, "held until the last group");
  t.finish("critical");
  await t.manager.whenIdle();
  assert.equal(t.logind.heldLocks().length, 0);
  assert.deepEqual(t.states, [
    { startTime: new Date(start).toISOString(), endTime: GO_ZERO_TIME },
    {
      startTime: new Date(start).toISOString(),
      endTime: new Date(start + 3_000).toISOString(),
    },
  ]);
});

Deno.test("a group whose pods do not stop in time gives way after its grace period", async () => {
  const t = setup([pod("stuck", 0, 300), pod("critical", 2_000_000_000)]);
  await using _ = t.manager;
  await t.manager.start();
  t.logind.prepareForShutdown(true);
  await settle();
  assert.deepEqual(t.kills.map((k) => k.name), ["stuck"]);
  await t.clock.advance(19_999);
  assert.deepEqual(t.kills.map((k) => k.name), ["stuck"]);
  await t.clock.advance(1);
  assert.deepEqual(t.kills.map((k) => k.name), ["stuck", "critical"]);
  await t.clock.advance(10_000);
  await t.manager.whenIdle();
  assert.equal(t.logind.heldLocks().length, 0);
});

Deno.test("a cancelled shutdown admits pods again and takes a new lock", async () => {
  const t = setup([]);
  await using _ = t.manager;
  await t.manager.start();
  t.logind.prepareForShutdown(true);
  await t.manager.whenIdle();
  assert.equal(t.logind.heldLocks().length, 0);
  t.logind.prepareForShutdown(false);
  await t.manager.whenIdle();
  assert.equal(t.manager.shutdownError(), undefined);
  assert.deepEqual(t.manager.admit(pod("new")), { admit: true });
  assert.equal(t.logind.heldLocks().length, 1);
  assert.equal(
    t.events.at(-1),
    "Shutdown manager detected shutdown cancellation",
  );
});

Deno.test("no state file without the by-priority gate", async () => {
  const t = setup([], { storeState: false });
  await using _ = t.manager;
  await t.manager.start();
  t.logind.prepareForShutdown(true);
  await t.manager.whenIdle();
  assert.deepEqual(t.states, []);
});

Deno.test("a lost bus connection is watched again a second later, with a new lock", async () => {
  const t = setup([pod("web")]);
  await using _ = t.manager;
  await t.manager.start();
  t.logind.connections[0]!.drop();
  await settle();
  await t.clock.advance(999);
  assert.equal(t.logind.connections.length, 1);
  await t.clock.advance(1);
  await settle();
  assert.equal(t.logind.connections.length, 2);
  assert.equal(t.logind.heldLocks().length, 1, "the old lock is replaced");
  t.logind.prepareForShutdown(true);
  await settle();
  assert.deepEqual(t.kills.map((k) => k.name), ["web"]);
});

Deno.test("stop() releases the lock", async () => {
  const t = setup([]);
  await t.manager.start();
  await t.manager.stop();
  await t.manager.stop();
  assert.equal(t.logind.heldLocks().length, 0);
});
