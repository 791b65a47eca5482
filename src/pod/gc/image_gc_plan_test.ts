import assert from "node:assert/strict";
import {
  freeDiskSpaceFailedMessage,
  type ImageGcPolicy,
  type ImageRecord,
  imagesInEvictionOrder,
  imagesInUse,
  planFreeSpace,
  planOldImages,
  updateImageRecords,
} from "./image_gc_plan.ts";

const NOW = 10_000_000;
const MIN = 60_000;
const POLICY: ImageGcPolicy = {
  highThresholdPercent: 85,
  lowThresholdPercent: 80,
  minAgeMs: 2 * MIN,
  maxAgeMs: 0,
};

function record(id: string, extra: Partial<ImageRecord> = {}): ImageRecord {
  return {
    id,
    firstDetected: NOW - 10 * MIN,
    lastUsed: 0,
    sizeBytes: 100,
    pinned: false,
    ...extra,
  };
}

function ids(records: readonly ImageRecord[]): string[] {
  return records.map((r) => r.id);
}

Deno.test("imagesInUse() counts every listed container's image, by id or else by ref", () => {
  assert.deepEqual(
    [...imagesInUse([
      { imageId: "running" },
      { imageId: "exited" },
      { imageId: "", imageRef: "ref-only" },
      { imageId: "", imageRef: "" },
      { imageId: "running" },
    ])],
    ["running", "exited", "ref-only"],
  );
});

Deno.test("updateImageRecords() keeps first detection, marks use by any container and drops gone images", () => {
  const previous = new Map([
    ["a", record("a", { firstDetected: 5, lastUsed: 7 })],
    ["gone", record("gone")],
  ]);
  const next = updateImageRecords(previous, {
    images: [
      { id: "a", sizeBytes: 300, pinned: false, names: [] },
      { id: "b", sizeBytes: 200, pinned: true, names: [] },
      { id: "c", sizeBytes: 50, pinned: false, names: [] },
    ],
    inUse: new Set(["b"]),
  }, { detectTime: 1_000, now: 2_000 });
  assert.deepEqual([...next.keys()], ["a", "b", "c"]);
  assert.deepEqual(next.get("a"), {
    id: "a",
    firstDetected: 5,
    lastUsed: 7,
    sizeBytes: 300,
    pinned: false,
  });
  assert.equal(next.get("b")?.firstDetected, 1_000);
  assert.equal(next.get("b")?.lastUsed, 2_000);
  assert.equal(next.get("b")?.pinned, true);
  assert.equal(next.get("c")?.lastUsed, 0);
});

Deno.test("updateImageRecords() treats the sandbox image as pinned, by name or id", () => {
  const images = [
    { id: "p", sizeBytes: 1, pinned: false, names: ["kts.local/pause:3.9"] },
    { id: "sha256:q", sizeBytes: 1, pinned: false, names: [] },
    { id: "r", sizeBytes: 1, pinned: false, names: ["kts.local/app:1"] },
  ];
  const byName = updateImageRecords(new Map(), { images, inUse: new Set() }, {
    detectTime: 0,
    now: 0,
    sandboxImage: "kts.local/pause:3.9",
  });
  assert.deepEqual([...byName.values()].map((r) => r.pinned), [
    true,
    false,
    false,
  ]);
  const byId = updateImageRecords(new Map(), { images, inUse: new Set() }, {
    detectTime: 0,
    now: 0,
    sandboxImage: "sha256:q",
  });
  assert.deepEqual([...byId.values()].map((r) => r.pinned), [
    false,
    true,
    false,
  ]);
});

Deno.test("imagesInEvictionOrder() leaves out images in use and pinned ones, least recently used first, ties by detection", () => {
  const records = new Map([
    ["used", record("used", { lastUsed: 1 })],
    ["pinned", record("pinned", { pinned: true })],
    ["late", record("late", { lastUsed: 50 })],
    ["never-new", record("never-new", { firstDetected: 20 })],
    ["never-old", record("never-old", { firstDetected: 10 })],
    ["mid", record("mid", { lastUsed: 30 })],
  ]);
  assert.deepEqual(
    ids(imagesInEvictionOrder(records, new Set(["used"]))),
    ["never-old", "never-new", "mid", "late"],
  );
});

Deno.test("planOldImages() does nothing without a maximum age or before the kubelet ran that long", () => {
  const candidates = [record("a", { lastUsed: NOW - 100 * MIN })];
  assert.deepEqual(
    ids(
      planOldImages(candidates, { policy: POLICY, now: NOW, beganGc: 0 })
        .remove,
    ),
    [],
  );
  const policy = { ...POLICY, maxAgeMs: 10 * MIN };
  // ran exactly the maximum age: not yet
  assert.deepEqual(
    ids(
      planOldImages(candidates, { policy, now: NOW, beganGc: NOW - 10 * MIN })
        .remove,
    ),
    [],
  );
  assert.deepEqual(
    ids(
      planOldImages(candidates, {
        policy,
        now: NOW,
        beganGc: NOW - 10 * MIN - 1,
      }).remove,
    ),
    ["a"],
  );
});

Deno.test("planOldImages() removes those unused for longer than the maximum age, keeps the rest in order", () => {
  const policy = { ...POLICY, maxAgeMs: 10 * MIN };
  const plan = planOldImages([
    record("old", { lastUsed: NOW - 10 * MIN - 1 }),
    record("edge", { lastUsed: NOW - 10 * MIN }),
    record("recent", { lastUsed: NOW - MIN }),
  ], { policy, now: NOW, beganGc: 0 });
  assert.deepEqual(ids(plan.remove), ["old"]);
  assert.deepEqual(ids(plan.left), ["edge", "recent"]);
});

Deno.test("planFreeSpace() frees nothing below the high threshold and frees at it", () => {
  const candidates = [record("a"), record("b")];
  // 84 % used
  assert.deepEqual(
    planFreeSpace(candidates, {
      fs: { capacityBytes: 1000, availableBytes: 160 },
      policy: POLICY,
      now: NOW,
    }),
    { kind: "below-threshold", usagePercent: 84 },
  );
  // 85 % used: bring it to 80 %, i.e. free 200 - 150 = 50 bytes; one image does
  const at = planFreeSpace(candidates, {
    fs: { capacityBytes: 1000, availableBytes: 150 },
    policy: POLICY,
    now: NOW,
  });
  assert.equal(at.kind, "free");
  if (at.kind !== "free") return;
  assert.equal(at.usagePercent, 85);
  assert.equal(at.amountToFree, 50);
  assert.deepEqual(ids(at.remove), ["a"]);
  assert.equal(at.plannedBytes, 100);
});

Deno.test("planFreeSpace() stops once the low threshold is reached, in eviction order", () => {
  const plan = planFreeSpace(
    [record("a"), record("b"), record("c"), record("d")],
    {
      fs: { capacityBytes: 1000, availableBytes: 0 },
      policy: POLICY,
      now: NOW,
    },
  );
  // 100 % used → free 200 bytes: two images of 100
  assert.equal(plan.kind, "free");
  if (plan.kind !== "free") return;
  assert.equal(plan.amountToFree, 200);
  assert.deepEqual(ids(plan.remove), ["a", "b"]);
});

Deno.test("planFreeSpace() skips images younger than the minimum age and images used now", () => {
  const plan = planFreeSpace([
    record("young", { firstDetected: NOW - 2 * MIN + 1 }),
    record("just-used", { lastUsed: NOW }),
    record("edge-age", { firstDetected: NOW - 2 * MIN }),
    record("other"),
  ], {
    fs: { capacityBytes: 1000, availableBytes: 0 },
    policy: POLICY,
    now: NOW,
  });
  assert.equal(plan.kind, "free");
  if (plan.kind !== "free") return;
  assert.deepEqual(ids(plan.remove), ["edge-age", "other"]);
});

Deno.test("planFreeSpace() plans every candidate when they cannot free enough", () => {
  const plan = planFreeSpace([record("a", { sizeBytes: 30 })], {
    fs: { capacityBytes: 1000, availableBytes: 100 },
    policy: POLICY,
    now: NOW,
  });
  assert.equal(plan.kind, "free");
  if (plan.kind !== "free") return;
  assert.equal(plan.amountToFree, 100);
  assert.deepEqual(ids(plan.remove), ["a"]);
  assert.equal(plan.plannedBytes, 30);
  assert.equal(
    freeDiskSpaceFailedMessage(plan.amountToFree, plan.plannedBytes),
    "Failed to garbage collect required amount of images. Attempted to free 100 bytes, but only found 30 bytes eligible to free.",
  );
});

Deno.test("planFreeSpace() reports a zero capacity and caps available bytes at the capacity", () => {
  assert.deepEqual(
    planFreeSpace([record("a")], {
      fs: { capacityBytes: 0, availableBytes: 0 },
      policy: POLICY,
      now: NOW,
    }),
    {
      kind: "invalid-capacity",
      message: "invalid capacity 0 on image filesystem",
    },
  );
  assert.deepEqual(
    planFreeSpace([record("a")], {
      fs: { capacityBytes: 1000, availableBytes: 5000 },
      policy: POLICY,
      now: NOW,
    }),
    { kind: "below-threshold", usagePercent: 0 },
  );
});
