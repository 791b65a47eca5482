import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { TokenBucket } from "./token_bucket.ts";

Deno.test("TokenBucket.reserve() allows a burst, then paces at qps", async () => {
  const clock = new FakeClock(0);
  const bucket = new TokenBucket({ clock }, { qps: 5, burst: 2 });
  assert.equal(bucket.reserve(), 0);
  assert.equal(bucket.reserve(), 0);
  assert.equal(bucket.reserve(), 200);
  assert.equal(bucket.reserve(), 400);
  await clock.advance(1000);
  // 5 tokens refilled, 2 were owed: 2 free now (capped by burst), then waits again.
  assert.equal(bucket.reserve(), 0);
  assert.equal(bucket.reserve(), 0);
  assert.equal(bucket.reserve(), 200);
});

Deno.test("TokenBucket.take() waits on the clock; qps 0 means no limit", async () => {
  const clock = new FakeClock(0);
  const bucket = new TokenBucket({ clock }, { qps: 1, burst: 1 });
  await bucket.take();
  let done = false;
  const p = bucket.take().then(() => done = true);
  await clock.advance(999);
  assert.equal(done, false);
  await clock.advance(1);
  await p;
  assert.equal(done, true);
  const free = new TokenBucket({ clock }, { qps: 0, burst: 1 });
  for (let i = 0; i < 10; i++) assert.equal(free.reserve(), 0);
});

Deno.test("TokenBucket.tryTake() never waits and takes nothing when empty", async () => {
  const clock = new FakeClock(0);
  const bucket = new TokenBucket({ clock }, { qps: 1 / 300, burst: 2 });
  assert.equal(bucket.tryTake(), true);
  assert.equal(bucket.tryTake(), true);
  assert.equal(bucket.tryTake(), false);
  await clock.advance(299_000);
  assert.equal(bucket.tryTake(), false);
  await clock.advance(1_000);
  assert.equal(bucket.tryTake(), true);
  assert.equal(bucket.tryTake(), false);
});
