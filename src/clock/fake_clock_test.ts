import assert from "node:assert/strict";
import { FakeClock } from "./testing.ts";
import { systemClock } from "./mod.ts";

Deno.test("FakeClock.advance() wakes sleeps in due order", async () => {
  const clock = new FakeClock(0);
  const woke: string[] = [];
  clock.sleep(300).then(() => woke.push("c"));
  clock.sleep(100).then(() => woke.push("a"));
  clock.sleep(200).then(() => woke.push("b"));
  await clock.advance(150);
  assert.deepEqual(woke, ["a"]);
  assert.equal(clock.now(), 150);
  assert.equal(clock.pendingSleeps, 2);
  await clock.advance(1000);
  assert.deepEqual(woke, ["a", "b", "c"]);
});

Deno.test("FakeClock.advance() runs chained sleeps that fall due", async () => {
  const clock = new FakeClock(0);
  const ticks: number[] = [];
  (async () => {
    for (let i = 0; i < 3; i++) {
      await clock.sleep(10);
      ticks.push(clock.now());
    }
  })();
  await clock.advance(35);
  assert.deepEqual(ticks, [10, 20, 30]);
});

Deno.test("FakeClock.sleep() rejects when its signal aborts", async () => {
  const clock = new FakeClock(0);
  const controller = new AbortController();
  const sleeping = clock.sleep(100, controller.signal);
  controller.abort(new Error("stop"));
  await assert.rejects(sleeping, { message: "stop" });
  assert.equal(clock.pendingSleeps, 0);
});

Deno.test("systemClock.sleep() honours abort", async () => {
  const controller = new AbortController();
  const sleeping = systemClock.sleep(60_000, controller.signal);
  controller.abort(new Error("cancelled"));
  await assert.rejects(sleeping, { message: "cancelled" });
  await systemClock.sleep(1);
});
