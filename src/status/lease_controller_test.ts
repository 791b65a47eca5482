import assert from "node:assert/strict";
import { ApiConflictError, ApiStatusError } from "../api/mod.ts";
import { FakeApiServer } from "../api/testing.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { microTime, NodeLeaseController } from "./lease_controller.ts";

function setup(uid: { value: string | undefined } = { value: undefined }) {
  const api = new FakeApiServer();
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const lease = new NodeLeaseController({
    api,
    clock,
    logger: new CaptureLogger(),
    nodeUid: () => uid.value,
  }, { nodeName: "node-a", leaseDurationSeconds: 40 });
  return { api, clock, lease, uid };
}

const stored = (api: FakeApiServer) => api.leases.get("kube-node-lease/node-a");

Deno.test("microTime() prints six fractional digits", () => {
  assert.equal(
    microTime(Date.UTC(2026, 0, 1, 0, 0, 0, 120)),
    "2026-01-01T00:00:00.120000Z",
  );
});

Deno.test("NodeLeaseController.run() creates the lease and renews it every 25 % of its duration", async () => {
  const { api, clock, lease } = setup();
  assert.equal(lease.renewIntervalMs, 10_000);
  const stop = new AbortController();
  const running = lease.run(stop.signal);
  await clock.advance(0);
  const first = stored(api)!;
  assert.deepEqual(first.spec, {
    holderIdentity: "node-a",
    leaseDurationSeconds: 40,
    renewTime: "2026-01-01T00:00:00.000000Z",
  });
  await clock.advance(9_999);
  assert.equal(stored(api)!.spec.renewTime, first.spec.renewTime);
  await clock.advance(1);
  assert.equal(stored(api)!.spec.renewTime, "2026-01-01T00:00:10.000000Z");
  await clock.advance(10_000);
  assert.equal(stored(api)!.spec.renewTime, "2026-01-01T00:00:20.000000Z");
  assert.deepEqual(api.calls.map((c) => c.method), [
    "getLease",
    "createLease",
    "updateLease",
    "updateLease",
  ]);
  stop.abort();
  await running;
});

Deno.test("NodeLeaseController.sync() adds the Node owner reference once the UID is known", async () => {
  const { api, lease, uid } = setup();
  const signal = new AbortController().signal;
  await lease.sync(signal);
  assert.equal(stored(api)!.metadata.ownerReferences, undefined);
  uid.value = "node-uid";
  await lease.sync(signal);
  assert.deepEqual(stored(api)!.metadata.ownerReferences, [{
    apiVersion: "v1",
    kind: "Node",
    name: "node-a",
    uid: "node-uid",
  }]);
});

Deno.test("NodeLeaseController.sync() re-reads the lease after a conflict and retries", async () => {
  const { api, lease } = setup();
  const signal = new AbortController().signal;
  await lease.sync(signal);
  // Someone else wrote the lease: our copy is stale.
  stored(api)!.metadata.resourceVersion = "999";
  await lease.sync(signal);
  assert.deepEqual(api.calls.map((c) => c.method), [
    "getLease",
    "createLease",
    "updateLease", // conflict
    "getLease",
    "updateLease",
  ]);
  assert.equal(
    lease.latest?.metadata.resourceVersion,
    stored(api)!.metadata.resourceVersion,
  );
  api.injectError("updateLease", new ApiConflictError("c", { code: 409 }));
  await lease.sync(signal);
  assert.equal(api.calls.at(-1)?.method, "updateLease");
});

Deno.test("NodeLeaseController.run() keeps retrying with back-off while the API server fails", async () => {
  const { api, clock, lease } = setup();
  for (let i = 0; i < 4; i++) {
    api.injectError("getLease", new ApiStatusError("down", { code: 503 }));
  }
  const stop = new AbortController();
  const running = lease.run(stop.signal);
  await clock.advance(0);
  assert.equal(stored(api), undefined);
  await clock.advance(100 + 200 + 400 + 800);
  assert.ok(stored(api));
  stop.abort();
  await running;
});
