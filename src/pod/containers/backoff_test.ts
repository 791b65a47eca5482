import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import {
  containerBackoffKey,
  createBackoff,
  createContainerBackoff,
  imageBackoffKey,
} from "./backoff.ts";
import type { Pod } from "../types.ts";

Deno.test("createContainerBackoff() doubles from 10s up to 300s", () => {
  const clock = new FakeClock(0);
  const b = createContainerBackoff({ clock });
  const windows: number[] = [];
  for (let i = 0; i < 8; i++) {
    b.next("k", clock.now());
    windows.push(b.get("k"));
  }
  assert.deepEqual(windows, [
    10_000,
    20_000,
    40_000,
    80_000,
    160_000,
    300_000,
    300_000,
    300_000,
  ]);
});

Deno.test("isInBackoffSince() is true only inside the window after the event", async () => {
  const clock = new FakeClock(0);
  const b = createContainerBackoff({ clock });
  assert.equal(b.isInBackoffSince("k", 0), false, "no entry yet");
  b.next("k", 0);
  assert.equal(b.isInBackoffSince("k", 0), true);
  await clock.advance(9_999);
  assert.equal(b.isInBackoffSince("k", 0), true);
  await clock.advance(1);
  assert.equal(b.isInBackoffSince("k", 0), false);
  assert.equal(b.expiresAt("k", 0), 10_000);
});

Deno.test("next() resets to the initial window after 10 minutes without update", async () => {
  const clock = new FakeClock(0);
  const b = createContainerBackoff({ clock });
  b.next("k", 0);
  b.next("k", 0);
  b.next("k", 0);
  assert.equal(b.get("k"), 40_000);
  await clock.advance(600_001);
  // the container ran for more than 10 minutes before finishing now
  assert.equal(b.isInBackoffSince("k", clock.now()), false);
  b.next("k", clock.now());
  assert.equal(b.get("k"), 10_000);
});

Deno.test("gc() drops stale entries only", async () => {
  const clock = new FakeClock(0);
  const b = createBackoff({ clock }, { initialMs: 1_000, maxMs: 4_000 });
  b.next("old", 0);
  await clock.advance(8_001);
  b.next("new", clock.now());
  b.gc();
  assert.equal(b.size, 1);
  assert.equal(b.get("old"), 0);
  assert.equal(b.get("new"), 1_000);
});

Deno.test("createBackoff() rejects a maximum below the initial window", () => {
  const clock = new FakeClock(0);
  assert.throws(
    () => createBackoff({ clock }, { initialMs: 10, maxMs: 5 }),
    RangeError,
  );
});

Deno.test("backoff keys follow the kubelet layout", () => {
  const pod: Pod = {
    metadata: { name: "web", namespace: "prod", uid: "u1" },
    spec: { containers: [{ name: "app", image: "nginx" }] },
  };
  assert.match(
    containerBackoffKey(pod, pod.spec.containers[0]!),
    /^web_prod_u1_app_[0-9a-f]+$/,
  );
  assert.equal(imageBackoffKey(pod, "nginx"), "u1_nginx");
});
