/**
 * Wiring, not logic: the sync loop of a real `createKubelet` must feed the monitor that the
 * healthz `syncloop` check reads (upstream `syncLoopMonitor`, `LatestLoopEntryTime`).
 */

import assert from "node:assert/strict";
import { createHandler, SYNC_LOOP_MIN_STALE_MS } from "../../src/server/mod.ts";
import { startHarness } from "./_harness.ts";

Deno.test("the kubelet's sync loop keeps /healthz/syncloop fresh while it runs; it goes stale once the loop stops", async () => {
  await using h = await startHarness();
  await h.settle();
  const handler = createHandler({
    clock: h.clock,
    logger: h.logger,
    syncLoop: h.kubelet.syncLoop,
    resyncIntervalMs: 60_000,
  });
  const syncloop = async () => {
    const response = await handler(
      new Request("http://127.0.0.1:10248/healthz/syncloop"),
    );
    return `${response.status} ${await response.text()}`;
  };
  // longer than the staleness limit, with the loop iterating on its 1 s resync ticker
  await h.clock.advance(SYNC_LOOP_MIN_STALE_MS + 60_000);
  assert.equal(await syncloop(), "200 ok");
  await h.kubelet.stop();
  await h.clock.advance(SYNC_LOOP_MIN_STALE_MS + 1_000);
  assert.equal(
    await syncloop(),
    "500 internal server error: sync Loop took longer than expected\n",
  );
});
