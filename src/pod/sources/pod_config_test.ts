import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { PodConfig, type PodUpdate } from "./pod_config.ts";
import {
  CONFIG_SEEN_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
} from "../static/static_pod.ts";
import type { Pod } from "../types.ts";

function pod(uid: string, image = "img"): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: "default", uid },
    spec: { containers: [{ name: "c", image }] },
  };
}

Deno.test("PodConfig.set() emits ADD, UPDATE and REMOVE against the previous snapshot", () => {
  const clock = new FakeClock();
  const seen: PodUpdate[] = [];
  const config = new PodConfig({ clock }, {
    sources: ["file"],
    onUpdate: (u) => seen.push(u),
  });
  const first = config.set("file", [pod("a"), pod("b")]);
  assert.deepEqual(
    first.map((u) => [u.op, u.pods.map((p) => p.metadata.uid)]),
    [["ADD", ["a", "b"]]],
  );
  assert.equal(
    first[0]!.pods[0]!.metadata.annotations![CONFIG_SOURCE_ANNOTATION],
    "file",
  );
  // No change → no update.
  assert.deepEqual(config.set("file", [pod("a"), pod("b")]), []);
  const next = config.set("file", [pod("a", "img2"), pod("c")]);
  assert.deepEqual(next.map((u) => [u.op, u.pods.map((p) => p.metadata.uid)]), [
    ["REMOVE", ["b"]],
    ["ADD", ["c"]],
    ["UPDATE", ["a"]],
  ]);
  assert.equal(seen.length, 4);
  assert.deepEqual(config.pods().map((p) => p.metadata.uid).sort(), ["a", "c"]);
});

Deno.test("PodConfig keeps the first config.seen time of a pod", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const config = new PodConfig({ clock }, { sources: ["file"] });
  config.set("file", [pod("a")]);
  await clock.advance(5000);
  const [u] = config.set("file", [pod("a", "other")]);
  assert.equal(
    u!.pods[0]!.metadata.annotations![CONFIG_SEEN_ANNOTATION],
    "2026-01-01T00:00:00.000Z",
  );
});

Deno.test("PodConfig.allSourcesReady() waits for every source, even an empty one", () => {
  const config = new PodConfig({ clock: new FakeClock() }, {
    sources: ["file", "http"],
  });
  assert.equal(config.allSourcesReady(), false);
  config.set("file", [pod("a")]);
  assert.equal(config.allSourcesReady(), false);
  config.set("http", []);
  assert.equal(config.allSourcesReady(), true);
  assert.equal(config.sourceSeen("http"), true);
});

Deno.test("PodConfig.set() reports a new status alone as RECONCILE, a resourceVersion alone as nothing, and keeps the new copy", () => {
  const seen: PodUpdate[] = [];
  const config = new PodConfig({ clock: new FakeClock() }, {
    sources: ["api"],
    onUpdate: (u) => seen.push(u),
  });
  const pod: Pod = {
    metadata: {
      name: "a",
      namespace: "default",
      uid: "u",
      resourceVersion: "1",
    },
    spec: { containers: [{ name: "c", image: "busybox" }] },
  };
  config.set("api", [pod]);
  const echoed: Pod = {
    ...pod,
    metadata: { ...pod.metadata, resourceVersion: "2" },
    status: { phase: "Running" },
  };
  config.set("api", [echoed]);
  assert.deepEqual(seen.map((u) => u.op), ["ADD", "RECONCILE"]);
  assert.equal(config.pods()[0]!.status?.phase, "Running");
  config.set("api", [{
    ...echoed,
    metadata: { ...echoed.metadata, resourceVersion: "3" },
  }]);
  assert.deepEqual(seen.map((u) => u.op), ["ADD", "RECONCILE"]);
  config.set("api", [{
    ...echoed,
    metadata: { ...echoed.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
  }]);
  assert.deepEqual(seen.map((u) => u.op), ["ADD", "RECONCILE", "UPDATE"]);
});

Deno.test("PodConfig.set() keeps the stored pod when a source hands in the same object again", () => {
  const config = new PodConfig({ clock: new FakeClock() }, {
    sources: ["file"],
  });
  const a = pod("a");
  config.set("file", [a]);
  const stored = config.pods()[0]!;
  assert.deepEqual(config.set("file", [a]), []);
  assert.equal(config.pods()[0], stored);
  // A new object for the same UID is compared again: a changed image is an UPDATE.
  const updates = config.set("file", [pod("a", "img2")]);
  assert.deepEqual(updates.map((u) => u.op), ["UPDATE"]);
  assert.equal(config.pods()[0]!.spec.containers[0]!.image, "img2");
  // The same new object again: nothing; the old object after it: an UPDATE back.
  assert.deepEqual(config.set("file", [config.pods()[0]!]), []);
  assert.deepEqual(config.set("file", [a]).map((u) => u.op), ["UPDATE"]);
});
