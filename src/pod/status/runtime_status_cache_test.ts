import assert from "node:assert/strict";
import { RuntimeStatusCache } from "./runtime_status_cache.ts";
import type { PodRuntimeStatus } from "../types.ts";

function status(uid: string, ip: string): PodRuntimeStatus {
  return {
    uid,
    name: "web",
    namespace: "default",
    sandboxes: [{
      id: `s-${ip}`,
      attempt: 0,
      ready: true,
      createdAt: 1,
      ip,
      additionalIps: [],
    }],
    containers: [],
  };
}

Deno.test("RuntimeStatusCache keeps a read until the pod is invalidated", () => {
  const cache = new RuntimeStatusCache();
  assert.equal(cache.get("u1"), undefined);
  const read = cache.begin("u1");
  const first = status("u1", "10.0.0.1");
  cache.store(read, first);
  assert.equal(cache.get("u1"), first);
  // another pod's change leaves it
  cache.invalidate("u2");
  assert.equal(cache.get("u1"), first);
  cache.invalidate("u1");
  assert.equal(cache.get("u1"), undefined);
  assert.equal(cache.size, 0);
});

Deno.test("RuntimeStatusCache drops a read that an invalidation overtook", () => {
  const cache = new RuntimeStatusCache();
  const early = cache.begin("u1");
  cache.invalidate("u1");
  const late = cache.begin("u1");
  cache.store(early, status("u1", "10.0.0.1"));
  assert.equal(cache.get("u1"), undefined, "a read begun before the change");
  const fresh = status("u1", "10.0.0.2");
  cache.store(late, fresh);
  assert.equal(cache.get("u1"), fresh);
});

Deno.test("RuntimeStatusCache: an abandoned read keeps nothing and holds nothing", () => {
  const cache = new RuntimeStatusCache();
  const read = cache.begin("u1");
  cache.abandon(read);
  // the finished read is no longer tracked: a later invalidation does not reach it
  cache.invalidate("u1");
  assert.equal(read.stale, false);
  assert.equal(cache.get("u1"), undefined);
});
