import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { LoopEventQueue, runSyncLoop, type SyncHandler } from "./sync_loop.ts";
import { SyncLoopMonitor } from "./sync_loop_monitor.ts";

function handler(housekeeping: () => Promise<void>): SyncHandler {
  return {
    handlePodAdditions() {},
    handlePodUpdates() {},
    handlePodRemoves() {},
    handlePodSet() {},
    handlePodReconcile() {},
    handlePlegEvent() {},
    handleProbeResult() {},
    handleResync() {},
    handleHousekeeping: housekeeping,
  };
}

Deno.test("SyncLoopMonitor has no entry time until something is recorded", () => {
  const monitor = new SyncLoopMonitor();
  assert.equal(monitor.latestLoopEntryTime(), undefined);
  monitor.record(42);
  assert.equal(monitor.latestLoopEntryTime(), 42);
});

Deno.test("runSyncLoop() records the clock's time on the monitor as it iterates", async () => {
  const clock = new FakeClock(1_000_000);
  const monitor = new SyncLoopMonitor();
  const ac = new AbortController();
  const running = runSyncLoop({
    queue: new LoopEventQueue(),
    handler: handler(() => Promise.resolve()),
    clock,
    logger: new CaptureLogger(),
    monitor,
  }, { signal: ac.signal, resyncPeriodMs: 1000, housekeepingPeriodMs: 2000 });
  await clock.advance(0);
  assert.equal(monitor.latestLoopEntryTime(), 1_000_000);
  // The resync ticker keeps an otherwise idle loop iterating.
  await clock.advance(10_000);
  assert.equal(monitor.latestLoopEntryTime(), 1_010_000);
  ac.abort();
  await running;
});

Deno.test("runSyncLoop() leaves the monitor behind while a handler hangs", async () => {
  const clock = new FakeClock(0);
  const monitor = new SyncLoopMonitor();
  const ac = new AbortController();
  let release: () => void = () => {};
  const hung = new Promise<void>((r) => (release = r));
  const running = runSyncLoop({
    queue: new LoopEventQueue(),
    handler: handler(() => hung),
    clock,
    logger: new CaptureLogger(),
    monitor,
  }, { signal: ac.signal, resyncPeriodMs: 1000, housekeepingPeriodMs: 2000 });
  await clock.advance(2000);
  const stuckAt = monitor.latestLoopEntryTime();
  assert.equal(stuckAt, 2000);
  await clock.advance(10 * 60_000);
  assert.equal(monitor.latestLoopEntryTime(), stuckAt);
  release();
  await clock.advance(1000);
  assert.equal(monitor.latestLoopEntryTime(), 10 * 60_000 + 3000);
  ac.abort();
  await running;
});
