import assert from "node:assert/strict";
import {
  evaluateThresholds,
  evictionGracePeriodSeconds,
  initialEvictionState,
  type Observations,
  thresholdsMet,
  thresholdToReclaim,
} from "./decide.ts";
import { parseThresholdConfig } from "./thresholds.ts";

const MI = 2 ** 20;
const mem = (available: number, timeMs = 0): Observations => ({
  "memory.available": { available, capacity: 1000 * MI, timeMs },
});

Deno.test("thresholdsMet() is met below the threshold, not at it", () => {
  const t = parseThresholdConfig({
    evictionHard: { "memory.available": "100Mi" },
  });
  assert.equal(thresholdsMet(t, mem(100 * MI), false).length, 0);
  assert.equal(thresholdsMet(t, mem(100 * MI - 1), false).length, 1);
});

Deno.test("thresholdsMet() with minimum reclaim holds until the threshold plus the reclaim is available", () => {
  const t = parseThresholdConfig({
    evictionHard: { "memory.available": "100Mi" },
    evictionMinimumReclaim: { "memory.available": "50Mi" },
  });
  assert.equal(thresholdsMet(t, mem(120 * MI), false).length, 0);
  assert.equal(thresholdsMet(t, mem(120 * MI), true).length, 1);
  assert.equal(thresholdsMet(t, mem(150 * MI), true).length, 0);
});

Deno.test("evaluateThresholds() acts on a soft threshold only once its grace period has passed", () => {
  const thresholds = parseThresholdConfig({
    evictionSoft: { "memory.available": "200Mi" },
    evictionSoftGracePeriod: { "memory.available": "30s" },
  });
  const input = { thresholds, transitionPeriodMs: 300_000 };
  let e = evaluateThresholds(initialEvictionState(), {
    ...input,
    observations: mem(150 * MI, 0),
    nowMs: 0,
  });
  assert.deepEqual(e.state.conditions, ["MemoryPressure"]);
  assert.equal(e.actionable.length, 0);
  e = evaluateThresholds(e.state, {
    ...input,
    observations: mem(150 * MI, 29_999),
    nowMs: 29_999,
  });
  assert.equal(e.actionable.length, 0);
  e = evaluateThresholds(e.state, {
    ...input,
    observations: mem(150 * MI, 30_000),
    nowMs: 30_000,
  });
  assert.equal(e.actionable.length, 1);
});

Deno.test("evaluateThresholds() keeps the condition for the transition period after the pressure ends", () => {
  const thresholds = parseThresholdConfig({
    evictionHard: { "memory.available": "100Mi" },
  });
  const input = { thresholds, transitionPeriodMs: 60_000 };
  let e = evaluateThresholds(initialEvictionState(), {
    ...input,
    observations: mem(50 * MI, 0),
    nowMs: 0,
  });
  assert.equal(e.actionable.length, 1);
  e = evaluateThresholds(e.state, {
    ...input,
    observations: mem(500 * MI, 59_999),
    nowMs: 59_999,
  });
  assert.deepEqual(e.state.conditions, ["MemoryPressure"]);
  assert.equal(e.actionable.length, 0);
  e = evaluateThresholds(e.state, {
    ...input,
    observations: mem(500 * MI, 60_000),
    nowMs: 60_000,
  });
  assert.deepEqual(e.state.conditions, []);
});

Deno.test("evaluateThresholds() does not act again on stats that did not change", () => {
  const thresholds = parseThresholdConfig({
    evictionHard: { "memory.available": "100Mi" },
  });
  const input = { thresholds, transitionPeriodMs: 0 };
  const first = evaluateThresholds(initialEvictionState(), {
    ...input,
    observations: mem(50 * MI, 5),
    nowMs: 10,
  });
  const again = evaluateThresholds(first.state, {
    ...input,
    observations: mem(50 * MI, 5),
    nowMs: 20,
  });
  assert.equal(again.actionable.length, 0);
});

Deno.test("thresholdToReclaim() takes memory before disk", () => {
  const t = parseThresholdConfig({
    evictionHard: { "nodefs.available": "10%", "memory.available": "1Mi" },
  });
  const disk = t.filter((x) => x.signal === "nodefs.available");
  assert.equal(thresholdToReclaim(t)?.resource, "memory");
  assert.equal(thresholdToReclaim(disk)?.resource, "ephemeral-storage");
  assert.equal(thresholdToReclaim([]), undefined);
});

Deno.test("evictionGracePeriodSeconds() is 1 for hard thresholds, else the smaller of the maximum and the pod's", () => {
  const [hard] = parseThresholdConfig({
    evictionHard: { "memory.available": "1Mi" },
  });
  const [soft] = parseThresholdConfig({
    evictionSoft: { "memory.available": "1Mi" },
    evictionSoftGracePeriod: { "memory.available": "1s" },
  });
  const opts = { maxPodGracePeriodSeconds: 20 };
  assert.equal(
    evictionGracePeriodSeconds(hard!, { ...opts, podGracePeriodSeconds: 30 }),
    1,
  );
  assert.equal(
    evictionGracePeriodSeconds(soft!, { ...opts, podGracePeriodSeconds: 30 }),
    20,
  );
  assert.equal(
    evictionGracePeriodSeconds(soft!, { ...opts, podGracePeriodSeconds: 5 }),
    5,
  );
  assert.equal(evictionGracePeriodSeconds(soft!, opts), 20);
});
