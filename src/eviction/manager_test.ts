import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createEvictionManager } from "./manager.ts";
import { parseThresholdConfig } from "./thresholds.ts";
import { evictionPod, FakeEvictionNode, memoryUsage } from "./testing.ts";

const MI = 2 ** 20;
const GI = 2 ** 30;

function node(): FakeEvictionNode {
  return new FakeEvictionNode({
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  });
}

function pressedNode(): FakeEvictionNode {
  const n = node();
  n.stats = {
    timeMs: 0,
    memory: { capacityBytes: GI, workingSetBytes: GI - 50 * MI },
  };
  n.pods = [
    evictionPod("guaranteed", { memoryRequest: "100Mi", memoryLimit: "100Mi" }),
    evictionPod("besteffort", { gracePeriodSeconds: 30 }),
  ];
  n.usage.set("uid-guaranteed", memoryUsage(90 * MI));
  n.usage.set("uid-besteffort", memoryUsage(10 * MI));
  return n;
}

Deno.test("EvictionManager.synchronize() evicts one pod, the first ranked, with a 1 s grace period on a hard threshold", async () => {
  const n = pressedNode();
  const m = createEvictionManager(n.deps(), {
    thresholds: parseThresholdConfig({
      evictionHard: { "memory.available": "100Mi" },
    }),
    transitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 0,
  });
  const evicted = await m.synchronize();
  assert.deepEqual(evicted.map((p) => p.metadata.name), ["besteffort"]);
  assert.equal(n.evicted.length, 1);
  assert.equal(n.evicted[0]!.gracePeriodSeconds, 1);
  assert.match(
    n.evicted[0]!.message,
    /^The node was low on resource: memory\. Threshold quantity: 100Mi, available: 50Mi\. Container main was using 10Mi, request is 0, has larger consumption of memory\. $/,
  );
  assert.deepEqual(m.conditions(), ["MemoryPressure"]);
  assert.deepEqual(n.events, [
    "EvictionThresholdMet: Attempting to reclaim memory",
  ]);
  // memory has no node-level reclaim
  assert.deepEqual(n.reclaims, []);
});

Deno.test("EvictionManager.synchronize() evicts nothing while no threshold is met", async () => {
  const n = pressedNode();
  n.stats = {
    timeMs: 0,
    memory: { capacityBytes: GI, workingSetBytes: GI - 100 * MI },
  };
  const m = createEvictionManager(n.deps(), {
    thresholds: parseThresholdConfig({
      evictionHard: { "memory.available": "100Mi" },
    }),
    transitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 0,
  });
  assert.deepEqual(await m.synchronize(), []);
  assert.deepEqual(m.conditions(), []);
});

Deno.test("EvictionManager.synchronize() never evicts a critical pod", async () => {
  const n = pressedNode();
  n.pods = [
    evictionPod("static", {
      annotations: { "kubernetes.io/config.source": "file" },
    }),
  ];
  n.usage = new Map([["uid-static", memoryUsage(500 * MI)]]);
  const m = createEvictionManager(n.deps(), {
    thresholds: parseThresholdConfig({
      evictionHard: { "memory.available": "100Mi" },
    }),
    transitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 0,
  });
  assert.deepEqual(await m.synchronize(), []);
  assert.deepEqual(n.evicted, []);
});

Deno.test("EvictionManager.synchronize() on disk pressure reclaims containers and images first and evicts no pod when that is enough", async () => {
  const n = pressedNode();
  const fs = (available: number) => ({
    capacityBytes: 100 * GI,
    availableBytes: available,
    inodes: 1000,
    inodesFree: 900,
  });
  n.stats = { timeMs: 0, nodeFs: fs(GI), imageFs: fs(GI) };
  n.statsAfterReclaim = {
    timeMs: 0,
    nodeFs: fs(20 * GI),
    imageFs: fs(20 * GI),
  };
  const m = createEvictionManager(n.deps(), {
    thresholds: parseThresholdConfig({
      evictionHard: { "nodefs.available": "10%" },
    }),
    transitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 0,
  });
  assert.deepEqual(await m.synchronize(), []);
  assert.deepEqual(n.reclaims, ["containers", "images"]);
  assert.deepEqual(m.conditions(), ["DiskPressure"]);
});

Deno.test("EvictionManager.synchronize() on nodefs pressure with a dedicated image filesystem evicts without reclaim", async () => {
  const n = pressedNode();
  n.dedicatedImageFs = true;
  n.stats = {
    timeMs: 0,
    nodeFs: {
      capacityBytes: 100 * GI,
      availableBytes: GI,
      inodes: 10,
      inodesFree: 5,
    },
  };
  const m = createEvictionManager(n.deps(), {
    thresholds: parseThresholdConfig({
      evictionHard: { "nodefs.available": "10%" },
    }),
    transitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 0,
  });
  assert.equal((await m.synchronize()).length, 1);
  assert.deepEqual(n.reclaims, []);
});

Deno.test("EvictionManager.synchronize() on a soft threshold gives the smaller of the maximum and the pod's grace period", async () => {
  const n = pressedNode();
  const m = createEvictionManager(n.deps(), {
    thresholds: parseThresholdConfig({
      evictionSoft: { "memory.available": "100Mi" },
      evictionSoftGracePeriod: { "memory.available": "1s" },
    }),
    transitionPeriodMs: 300_000,
    maxPodGracePeriodSeconds: 20,
  });
  assert.deepEqual(await m.synchronize(), []);
  await (n.clock as FakeClock).advance(1000);
  await m.synchronize();
  assert.equal(n.evicted[0]?.gracePeriodSeconds, 20);
});
