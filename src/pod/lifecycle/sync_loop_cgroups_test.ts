import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { PodWorkers } from "./pod_workers.ts";
import { PodSyncHandler } from "./sync_loop.ts";
import type { Pod, PodSyncer } from "../types.ts";

function pod(uid: string): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: "default", uid },
    spec: { containers: [{ name: "c", image: "i" }] },
  };
}

Deno.test("PodSyncHandler.handleHousekeeping() hands the active pods and the known uids to the pod cgroups", async () => {
  const syncer: PodSyncer = {
    syncPod: () => Promise.resolve({ terminal: false }),
    syncTerminatingPod: () => Promise.resolve(),
    syncTerminatedPod: () => Promise.resolve(),
    syncTerminatingRuntimePod: () => Promise.resolve(),
  };
  const clock = new FakeClock();
  const workers = new PodWorkers(
    { syncer, clock, logger: new CaptureLogger() },
    { random: () => 0 },
  );
  await using _ = workers;
  const calls: { active: string[]; known: Record<string, boolean> }[] = [];
  const handler = new PodSyncHandler({
    workers,
    clock,
    logger: new CaptureLogger(),
    allSourcesReady: () => true,
    podCgroups: {
      housekeeping(active, known) {
        calls.push({
          active: active.map((p) => p.metadata.uid ?? ""),
          known: Object.fromEntries(
            ["a", "b", "gone"].map((uid) => [uid, known(uid)]),
          ),
        });
        return Promise.resolve();
      },
    },
  });
  handler.handlePodAdditions([pod("a"), pod("b")]);
  await workers.whenIdle();
  handler.handlePodRemoves([pod("b")]);
  await workers.whenIdle();
  await handler.handleHousekeeping();
  assert.deepEqual(calls, [{
    active: ["a"],
    known: { a: true, b: false, gone: false },
  }]);
});

Deno.test("PodSyncHandler.handleHousekeeping() frees the user namespace ranges of pods it does not know", async () => {
  const syncer: PodSyncer = {
    syncPod: () => Promise.resolve({ terminal: false }),
    syncTerminatingPod: () => Promise.resolve(),
    syncTerminatedPod: () => Promise.resolve(),
    syncTerminatingRuntimePod: () => Promise.resolve(),
  };
  const clock = new FakeClock();
  const workers = new PodWorkers(
    { syncer, clock, logger: new CaptureLogger() },
    { random: () => 0 },
  );
  await using _ = workers;
  const asked: Record<string, boolean>[] = [];
  let ready = false;
  const handler = new PodSyncHandler({
    workers,
    clock,
    logger: new CaptureLogger(),
    allSourcesReady: () => ready,
    userNamespaces: {
      cleanupOrphans(known) {
        asked.push(
          Object.fromEntries(["a", "gone"].map((uid) => [uid, known(uid)])),
        );
        return Promise.resolve();
      },
    },
  });
  handler.handlePodAdditions([pod("a")]);
  await workers.whenIdle();
  // not before every source has reported: a pod not listed yet is not an orphan
  await handler.handleHousekeeping();
  assert.deepEqual(asked, []);
  ready = true;
  await handler.handleHousekeeping();
  assert.deepEqual(asked, [{ a: true, gone: false }]);
});
