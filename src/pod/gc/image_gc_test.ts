import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import {
  createImageGc,
  type ImageGcDeps,
  imageGcEnabled,
  runImageGc,
} from "./image_gc.ts";
import type { ImageFsStats, ImageGcPolicy } from "./image_gc_plan.ts";

const MIN = 60_000;
const POLICY: ImageGcPolicy = {
  highThresholdPercent: 85,
  lowThresholdPercent: 80,
  minAgeMs: 2 * MIN,
  maxAgeMs: 0,
};

interface FakeImage {
  id: string;
  size: number;
  pinned?: boolean;
  tags?: string[];
}

/** The three CRI calls image GC makes, over in-memory images and containers. */
function fakeRuntime(
  images: FakeImage[],
  containers: { imageRef: string; imageId?: string }[],
) {
  const removed: string[] = [];
  const failRemove = new Set<string>();
  const runtime = {
    listImages: () =>
      Promise.resolve({
        images: images.filter((i) => !removed.includes(i.id)).map((i) => ({
          id: i.id,
          size: BigInt(i.size),
          pinned: i.pinned ?? false,
          repoTags: i.tags ?? [],
          repoDigests: [],
        })),
      }),
    listContainers: () =>
      Promise.resolve({
        containers: containers.map((c) => ({
          imageRef: c.imageRef,
          imageId: c.imageId ?? "",
        })),
      }),
    removeImage: (req: { image?: { image?: string } }) => {
      const id = req.image?.image ?? "";
      if (failRemove.has(id)) {
        return Promise.reject(new Error(`image "${id}" is busy`));
      }
      removed.push(id);
      return Promise.resolve({});
    },
  } as unknown as ImageGcDeps["runtime"];
  return { runtime, removed, failRemove };
}

function setup(
  images: FakeImage[],
  containers: { imageRef: string; imageId?: string }[],
  options: {
    fs?: ImageFsStats;
    policy?: ImageGcPolicy;
    sandboxImage?: string;
  } = {},
) {
  const fake = fakeRuntime(images, containers);
  const clock = new FakeClock();
  const warnings: string[] = [];
  const gc = createImageGc({
    runtime: fake.runtime,
    imageFsStats: () =>
      Promise.resolve(
        options.fs ?? { capacityBytes: 1000, availableBytes: 0 },
      ),
    clock,
    logger: new CaptureLogger(),
    warn: (reason, message) => warnings.push(`${reason}: ${message}`),
  }, {
    policy: options.policy ?? POLICY,
    ...(options.sandboxImage ? { sandboxImage: options.sandboxImage } : {}),
  });
  return { gc, clock, warnings, ...fake };
}

Deno.test("ImageGc.collect() removes an unused image only once it is older than the minimum age", async () => {
  const t = setup([{ id: "unused", size: 300 }], []);
  const began = t.clock.now();
  await assert.rejects(t.gc.collect(began), /only found 0 bytes eligible/);
  assert.deepEqual(t.removed, []);
  await t.clock.advance(2 * MIN);
  await t.gc.collect(began);
  assert.deepEqual(t.removed, ["unused"]);
  assert.equal(t.gc.records().has("unused"), false);
});

Deno.test("ImageGc.collect() keeps images of any container (by image id or ref), pinned ones and the sandbox image", async () => {
  const t = setup(
    [
      { id: "by-ref", size: 100 },
      { id: "by-id", size: 100 },
      { id: "pinned", size: 100, pinned: true },
      { id: "pause", size: 100, tags: ["kts.local/pause:3.9"] },
      { id: "unused", size: 100 },
    ],
    [{ imageRef: "by-ref" }, { imageRef: "digest-ref", imageId: "by-id" }],
    {
      sandboxImage: "kts.local/pause:3.9",
    },
  );
  const began = t.clock.now();
  await t.gc.collect(began).catch(() => {});
  await t.clock.advance(3 * MIN);
  await assert.rejects(t.gc.collect(began), /only found 100 bytes/);
  assert.deepEqual(t.removed, ["unused"]);
  assert.equal(
    t.warnings.at(-1),
    "FreeDiskSpaceFailed: Failed to garbage collect required amount of images. Attempted to free 200 bytes, but only found 100 bytes eligible to free.",
  );
});

Deno.test("ImageGc.collect() does nothing below the high threshold", async () => {
  const t = setup([{ id: "unused", size: 300 }], [], {
    fs: { capacityBytes: 1000, availableBytes: 160 },
  });
  const began = t.clock.now();
  await t.clock.advance(10 * MIN);
  await t.gc.collect(began);
  await t.clock.advance(10 * MIN);
  await t.gc.collect(began);
  assert.deepEqual(t.removed, []);
  assert.deepEqual(t.warnings, []);
});

Deno.test("ImageGc.collect() removes images unused for longer than the maximum age whatever the usage", async () => {
  const t = setup([{ id: "old", size: 1 }], [], {
    fs: { capacityBytes: 1000, availableBytes: 1000 },
    policy: { ...POLICY, maxAgeMs: 5 * MIN },
  });
  const began = t.clock.now();
  await t.gc.collect(began);
  await t.clock.advance(5 * MIN);
  await t.gc.collect(began);
  assert.deepEqual(t.removed, []);
  await t.clock.advance(1);
  await t.gc.collect(began);
  assert.deepEqual(t.removed, ["old"]);
});

Deno.test("ImageGc.collect() records InvalidDiskCapacity on a zero capacity", async () => {
  const t = setup([], [], { fs: { capacityBytes: 0, availableBytes: 0 } });
  await assert.rejects(t.gc.collect(t.clock.now()), /invalid capacity 0/);
  assert.deepEqual(t.warnings, [
    "InvalidDiskCapacity: invalid capacity 0 on image filesystem",
  ]);
});

Deno.test("ImageGc.collect() goes on after a failed removal and reports it", async () => {
  const t = setup([{ id: "busy", size: 100 }, { id: "free", size: 100 }], []);
  t.failRemove.add("busy");
  const began = t.clock.now();
  await t.gc.collect(began).catch(() => {});
  await t.clock.advance(3 * MIN);
  await assert.rejects(t.gc.collect(began), /image "busy" is busy/);
  assert.deepEqual(t.removed, ["free"]);
  assert.equal(t.gc.records().has("busy"), true);
});

Deno.test("runImageGc() records ImageGCFailed only on the second failure in a row", async () => {
  const clock = new FakeClock();
  const warnings: string[] = [];
  let passes = 0;
  const failures = [true, false, true, true, false];
  const controller = new AbortController();
  const gc = {
    collect: () => {
      const fail = failures[passes++];
      if (passes >= failures.length) controller.abort();
      return fail ? Promise.reject(new Error("no stats")) : Promise.resolve();
    },
    deleteUnusedImages: () => Promise.resolve(),
    records: () => new Map(),
  };
  const run = runImageGc(gc, {
    clock,
    logger: new CaptureLogger(),
    warn: (reason, message) => warnings.push(`${reason}: ${message}`),
  }, { periodMs: 1000, signal: controller.signal });
  for (let i = 0; i < 4; i++) await clock.advance(1000);
  await run;
  assert.equal(passes, 5);
  assert.deepEqual(warnings, ["ImageGCFailed: no stats"]);
});

Deno.test("imageGcEnabled() is false only with a high threshold of 100 and no maximum age", () => {
  assert.equal(imageGcEnabled({ ...POLICY, highThresholdPercent: 100 }), false);
  assert.equal(
    imageGcEnabled({ ...POLICY, highThresholdPercent: 100, maxAgeMs: 1 }),
    true,
  );
  assert.equal(imageGcEnabled(POLICY), true);
});
