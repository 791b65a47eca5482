import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { EventCorrelator } from "./event_correlator.ts";
import type { Event } from "./types.ts";

function ev(message: string, over: Partial<Event> = {}): Event {
  return {
    metadata: { name: `p.${message.length}`, namespace: "ns" },
    involvedObject: { kind: "Pod", namespace: "ns", name: "p", uid: "u1" },
    reason: "BackOff",
    message,
    source: { component: "kubelet", host: "n1" },
    firstTimestamp: "2026-01-01T00:00:00Z",
    lastTimestamp: "2026-01-01T00:00:00Z",
    count: 1,
    type: "Warning",
    reportingComponent: "kubelet",
    reportingInstance: "n1",
    ...over,
  };
}

Deno.test("an identical event becomes a patch of count, lastTimestamp and message", () => {
  const c = new EventCorrelator({ clock: new FakeClock(0) });
  const first = c.correlate(ev("same"));
  assert.equal(first.skip, false);
  assert.ok(!first.skip && first.patch === undefined);
  c.updateState({
    ...(first.skip ? ev("") : first.event),
    metadata: { name: "p.stored", namespace: "ns", resourceVersion: "7" },
  });
  const second = c.correlate(
    ev("same", { lastTimestamp: "2026-01-01T00:01:00Z" }),
  );
  assert.ok(!second.skip);
  assert.equal(second.event.metadata.name, "p.stored");
  assert.equal(second.event.count, 2);
  assert.deepEqual(second.patch, {
    count: 2,
    lastTimestamp: "2026-01-01T00:01:00Z",
    message: "same",
  });
  const third = c.correlate(ev("same"));
  assert.ok(!third.skip && third.patch?.count === 3);
});

Deno.test("the 10th distinct message within 10 minutes is combined, and later ones patch it", () => {
  const clock = new FakeClock(1_000);
  const c = new EventCorrelator({ clock });
  for (let i = 0; i < 9; i++) {
    const r = c.correlate(ev(`m${i}`));
    assert.ok(!r.skip && !r.event.message.startsWith("(combined"));
  }
  const tenth = c.correlate(ev("m9"));
  assert.ok(!tenth.skip);
  assert.equal(tenth.event.message, "(combined from similar events): m9");
  assert.equal(tenth.event.count, 1);
  assert.equal(tenth.patch, undefined);
  const eleventh = c.correlate(ev("m10"));
  assert.ok(!eleventh.skip);
  assert.equal(eleventh.event.metadata.name, tenth.event.metadata.name);
  assert.deepEqual(
    eleventh.patch?.message,
    "(combined from similar events): m10",
  );
  assert.equal(eleventh.patch?.count, 2);
});

Deno.test("aggregation restarts after 10 quiet minutes", async () => {
  const clock = new FakeClock(0);
  const c = new EventCorrelator({ clock });
  for (let i = 0; i < 9; i++) c.correlate(ev(`m${i}`));
  await clock.advance(600_001);
  const r = c.correlate(ev("m9"));
  assert.ok(!r.skip && r.event.message === "m9");
});

Deno.test("the spam filter allows 25 events per object, then one per 5 minutes", async () => {
  const clock = new FakeClock(0);
  const c = new EventCorrelator({ clock }, { aggregateMaxEvents: 1000 });
  let written = 0;
  for (let i = 0; i < 30; i++) if (!c.correlate(ev(`m${i}`)).skip) written++;
  assert.equal(written, 25);
  // Another object has its own budget.
  const other = c.correlate(
    ev("x", { involvedObject: { kind: "Pod", name: "q", namespace: "ns" } }),
  );
  assert.equal(other.skip, false);
  await clock.advance(300_000);
  assert.equal(c.correlate(ev("later")).skip, false);
  assert.equal(c.correlate(ev("later2")).skip, true);
});

Deno.test("EventCorrelator.correlate() aggregates per reason: other reasons of one object are not combined", () => {
  // upstream EventAggregatorByReasonFunc keys on the reason as well as the object and type
  const c = new EventCorrelator({ clock: new FakeClock(0) });
  for (let i = 0; i < 9; i++) c.correlate(ev(`back-off ${i}`));
  const pulled = c.correlate(
    ev("Successfully pulled image", { reason: "Pulled", type: "Normal" }),
  );
  assert.ok(!pulled.skip);
  assert.equal(pulled.event.message, "Successfully pulled image");
  const failed = c.correlate(ev("probe failed", { reason: "Unhealthy" }));
  assert.ok(!failed.skip);
  assert.equal(failed.event.message, "probe failed");
  assert.equal(failed.event.reason, "Unhealthy");
  // the tenth distinct message of the same reason is still combined
  const tenth = c.correlate(ev("back-off 9"));
  assert.ok(!tenth.skip);
  assert.equal(
    tenth.event.message,
    "(combined from similar events): back-off 9",
  );
});
