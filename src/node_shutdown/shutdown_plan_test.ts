import assert from "node:assert/strict";
import type { Pod } from "../api/mod.ts";
import {
  groupPods,
  podShutdownGrace,
  requestedPeriodSeconds,
  shutdownGroups,
  type ShutdownSettings,
  SYSTEM_CRITICAL_PRIORITY,
} from "./shutdown_plan.ts";

function settings(over: Partial<ShutdownSettings>): ShutdownSettings {
  return {
    shutdownGracePeriodMs: 0,
    shutdownGracePeriodCriticalPodsMs: 0,
    byPodPriority: [],
    byPriorityGate: true,
    ...over,
  };
}

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

Deno.test("shutdownGroups() splits the period into regular pods then critical pods", () => {
  assert.deepEqual(
    shutdownGroups(settings({
      shutdownGracePeriodMs: 30_000,
      shutdownGracePeriodCriticalPodsMs: 10_000,
    })),
    [
      { priority: 0, gracePeriodSeconds: 20 },
      { priority: SYSTEM_CRITICAL_PRIORITY, gracePeriodSeconds: 10 },
    ],
  );
});

Deno.test("shutdownGroups() is empty without a period or with critical above it", () => {
  assert.deepEqual(shutdownGroups(settings({})), []);
  assert.deepEqual(
    shutdownGroups(settings({
      shutdownGracePeriodMs: 10_000,
      shutdownGracePeriodCriticalPodsMs: 10_001,
    })),
    [],
  );
  // equal periods: all of it for critical pods, none for the rest
  assert.deepEqual(
    shutdownGroups(settings({
      shutdownGracePeriodMs: 10_000,
      shutdownGracePeriodCriticalPodsMs: 10_000,
    })),
    [
      { priority: 0, gracePeriodSeconds: 0 },
      { priority: SYSTEM_CRITICAL_PRIORITY, gracePeriodSeconds: 10 },
    ],
  );
});

Deno.test("shutdownGroups() takes the by-priority list, sorted, only with its gate on", () => {
  const byPodPriority = [
    { priority: 100000, shutdownGracePeriodSeconds: 5 },
    { priority: 0, shutdownGracePeriodSeconds: 7 },
    { priority: 2000000000, shutdownGracePeriodSeconds: 3 },
  ];
  assert.deepEqual(shutdownGroups(settings({ byPodPriority })), [
    { priority: 0, gracePeriodSeconds: 7 },
    { priority: 100000, gracePeriodSeconds: 5 },
    { priority: 2000000000, gracePeriodSeconds: 3 },
  ]);
  assert.deepEqual(
    shutdownGroups(settings({
      byPodPriority,
      byPriorityGate: false,
      shutdownGracePeriodMs: 4_000,
    })),
    [
      { priority: 0, gracePeriodSeconds: 4 },
      { priority: SYSTEM_CRITICAL_PRIORITY, gracePeriodSeconds: 0 },
    ],
  );
});

Deno.test("requestedPeriodSeconds() adds the groups' periods", () => {
  assert.equal(
    requestedPeriodSeconds([
      { priority: 0, gracePeriodSeconds: 7 },
      { priority: 9, gracePeriodSeconds: 5 },
    ]),
    12,
  );
});

Deno.test("groupPods() puts a pod in the highest group not above its priority", () => {
  const groups = [
    { priority: 10, gracePeriodSeconds: 1 },
    { priority: 100, gracePeriodSeconds: 2 },
    { priority: 1000, gracePeriodSeconds: 3 },
  ];
  const names = (g: { pods: Pod[] }) => g.pods.map((p) => p.metadata.name);
  const out = groupPods(groups, [
    pod("below-all", 5),
    pod("no-priority"),
    pod("at-first", 10),
    pod("between", 99),
    pod("at-second", 100),
    pod("just-above-second", 101),
    pod("at-last", 1000),
    pod("above-all", 5000),
  ]);
  assert.deepEqual(out.map(names), [
    ["below-all", "no-priority", "at-first", "between"],
    ["at-second", "just-above-second"],
    ["at-last", "above-all"],
  ]);
  assert.deepEqual(out.map((g) => g.gracePeriodSeconds), [1, 2, 3]);
});

Deno.test("groupPods() sends critical pods to the critical group last", () => {
  const out = groupPods(
    shutdownGroups(settings({
      shutdownGracePeriodMs: 20_000,
      shutdownGracePeriodCriticalPodsMs: 10_000,
    })),
    [
      pod("critical", 2000001000),
      pod("regular"),
      pod("high", 1999999999),
    ],
  );
  assert.deepEqual(out.map((g) => g.pods.map((p) => p.metadata.name)), [
    ["regular", "high"],
    ["critical"],
  ]);
});

Deno.test("podShutdownGrace() keeps the pod's own period when it is not longer", () => {
  const group = { priority: 0, gracePeriodSeconds: 20 };
  assert.equal(podShutdownGrace(pod("short", 0, 5), group), 5);
  assert.equal(podShutdownGrace(pod("equal", 0, 20), group), 20);
  assert.equal(podShutdownGrace(pod("long", 0, 21), group), 20);
  assert.equal(podShutdownGrace(pod("zero", 0, 0), group), 0);
  assert.equal(podShutdownGrace(pod("unset"), group), 20);
});
