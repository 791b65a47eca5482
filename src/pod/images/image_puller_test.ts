import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { ImageService } from "../../runtime/mod.ts";
import { createSimRuntime } from "../../runtime/testing.ts";
import { createImagePuller, defaultPullPolicy } from "./image_puller.ts";
import type { Container, Pod } from "../types.ts";

const pod: Pod = {
  metadata: { name: "web", namespace: "default", uid: "u1" },
  spec: { containers: [] },
};

Deno.test("defaultPullPolicy() is Always for latest or untagged images", () => {
  assert.equal(defaultPullPolicy("nginx"), "Always");
  assert.equal(defaultPullPolicy("nginx:latest"), "Always");
  assert.equal(defaultPullPolicy("localhost:5000/app"), "Always");
  assert.equal(defaultPullPolicy("localhost:5000/app:v1"), "IfNotPresent");
  assert.equal(defaultPullPolicy("nginx@sha256:abcd"), "IfNotPresent");
});

function setup() {
  const clock = new FakeClock(0);
  const runtime = createSimRuntime({ clock });
  const puller = createImagePuller(
    { images: runtime, clock, logger: new CaptureLogger() },
    { serializeImagePulls: true },
  );
  return { clock, runtime, puller };
}

Deno.test("ensureImage() skips the pull for a present IfNotPresent image", async () => {
  const { runtime, puller } = setup();
  const c: Container = { name: "app", image: "nginx:1.27" };
  const first = await puller.ensureImage(pod, c, {});
  assert.ok(first.ok && first.imageRef.length > 0);
  const second = await puller.ensureImage(pod, c, {});
  assert.deepEqual(second, first);
  assert.equal(runtime.calls.filter((m) => m === "pullImage").length, 1);
});

Deno.test("ensureImage() always pulls with policy Always", async () => {
  const { runtime, puller } = setup();
  const c: Container = { name: "app", image: "nginx" };
  await puller.ensureImage(pod, c, {});
  await puller.ensureImage(pod, c, {});
  assert.equal(runtime.calls.filter((m) => m === "pullImage").length, 2);
});

Deno.test("ensureImage() rejects malformed image names with InvalidImageName", async () => {
  const { runtime, puller } = setup();
  for (const image of ["", "Nginx:1", "a b"]) {
    const r = await puller.ensureImage(pod, { name: "app", image }, {});
    assert.equal(r.ok ? "ok" : r.reason, "InvalidImageName", image);
  }
  assert.equal(runtime.calls.includes("pullImage"), false);
});

/** An image service whose pulls finish only when the test releases them. */
class GatedImages {
  active = 0;
  maxActive = 0;
  #gates: (() => void)[] = [];
  imageStatus() {
    return Promise.resolve({ image: undefined });
  }
  async pullImage(req: { image?: { image?: string } }) {
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    await new Promise<void>((resolve) => this.#gates.push(resolve));
    this.active--;
    return { imageRef: `sha256:${req.image?.image}` };
  }
  releaseAll(): number {
    const n = this.#gates.length;
    this.#gates.splice(0).forEach((g) => g());
    return n;
  }
}

async function pullMany(
  images: GatedImages,
  options: { serializeImagePulls: boolean; maxParallelImagePulls?: number },
) {
  const clock = new FakeClock(0);
  const puller = createImagePuller(
    {
      images: images as unknown as ImageService,
      clock,
      logger: new CaptureLogger(),
    },
    options,
  );
  const pending = ["a:1", "b:1", "c:1", "d:1"].map((image) =>
    puller.ensureImage(pod, { name: image, image }, {})
  );
  let done = 0;
  const all = Promise.all(pending).then((r) => {
    done = r.length;
    return r;
  });
  while (done === 0) {
    await new Promise((r) => setTimeout(r, 0));
    images.releaseAll();
  }
  return await all;
}

Deno.test("ensureImage() serializes pulls when serializeImagePulls is set", async () => {
  const images = new GatedImages();
  const results = await pullMany(images, { serializeImagePulls: true });
  assert.ok(results.every((r) => r.ok));
  assert.equal(images.maxActive, 1);
});

Deno.test("ensureImage() caps parallel pulls at maxParallelImagePulls", async () => {
  const capped = new GatedImages();
  await pullMany(capped, {
    serializeImagePulls: false,
    maxParallelImagePulls: 2,
  });
  assert.equal(capped.maxActive, 2);
  const unlimited = new GatedImages();
  await pullMany(unlimited, { serializeImagePulls: false });
  assert.equal(unlimited.maxActive, 4);
});

Deno.test("ensureImage() widens the pull back-off after each failure", async () => {
  const clock = new FakeClock(0);
  const runtime = createSimRuntime({
    clock,
    scenario: { images: { "bad:1": { pullFailures: -1 } } },
  });
  const puller = createImagePuller({
    images: runtime,
    clock,
    logger: new CaptureLogger(),
  }, { serializeImagePulls: true });
  const c: Container = { name: "app", image: "bad:1" };
  const reasons: string[] = [];
  const attempt = async () => {
    const r = await puller.ensureImage(pod, c, {});
    reasons.push(r.ok ? "ok" : `${r.reason}@${r.retryAt}`);
  };
  await attempt(); // fails at t=0, window 10s
  await clock.advance(9_000);
  await attempt(); // inside the window
  await clock.advance(1_000);
  await attempt(); // fails at t=10s, window 20s
  await clock.advance(19_000);
  await attempt();
  await clock.advance(1_000);
  await attempt(); // fails again at t=30s
  assert.deepEqual(reasons, [
    "ErrImagePull@10000",
    "ImagePullBackOff@10000",
    "ErrImagePull@30000",
    "ImagePullBackOff@30000",
    "ErrImagePull@70000",
  ]);
});
