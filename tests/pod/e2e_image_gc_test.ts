/**
 * Image GC on a real containerd: on a private runtime-only instance (the pass removes every
 * image it may), an unused image goes under a forced low threshold while the image of a
 * container that never ran stays.
 */
import assert from "node:assert/strict";
import { systemClock } from "../../src/clock/mod.ts";
import { fsFigures } from "../../src/kubelet/stats_summary.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { createImageGc } from "../../src/pod/mod.ts";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import { criEnv, IMAGE, privateCriMissing } from "./_containerd_e2e.ts";

const PAUSE = Deno.env.get("KUBELET_TS_CRI_PAUSE_IMAGE") ??
  "kts.local/pause:3.9";

Deno.test({
  name:
    "containerd: image GC removes an unused image over the threshold and keeps the image of a container",
  ignore: privateCriMissing,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const root = Deno.env.get("KTS_IMAGE_GC_CRI_ROOT") ??
      `${Deno.env.get("KUBELET_TS_CRI_ROOT")}-imagegc`;
    const env = {
      KTS_CRI_ROOT: root,
      KTS_CRI_RUNTIME_ONLY: "1",
      KTS_CRI_BRIDGE: Deno.env.get("KTS_IMAGE_GC_CRI_BRIDGE") ?? "ktsimggc",
      KTS_CRI_SUBNET: Deno.env.get("KTS_IMAGE_GC_CRI_SUBNET") ??
        "10.110.0.0/16",
    };
    const lines = await criEnv("up", env);
    const endpoint = /^KUBELET_TS_CRI_ENDPOINT=(.+)$/m.exec(lines)?.[1] ?? "";
    const runtime = createCriRuntime({ endpoint });
    try {
      const uid = crypto.randomUUID();
      const config = {
        metadata: { name: "gc", uid, namespace: "default" },
        logDirectory: `${root}/pods/${uid}`,
      };
      const { podSandboxId } = await runtime.runPodSandbox({ config });
      // created, never started: its image is still in use
      await runtime.createContainer({
        podSandboxId,
        config: {
          metadata: { name: "keep" },
          image: { image: PAUSE },
          logPath: "keep/0.log",
        },
        sandboxConfig: config,
      });
      const before = (await runtime.listImages({})).images;
      const id = (ref: string) =>
        before.find((i) => i.repoTags.includes(ref))?.id;
      const busybox = id(IMAGE);
      const pause = id(PAUSE);
      assert.ok(busybox && pause, "both test images are present");

      const warnings: string[] = [];
      const gc = createImageGc({
        runtime,
        imageFsStats: async () => {
          const info = await runtime.imageFsInfo({});
          const mount = info.imageFilesystems[0]?.fsId?.mountpoint ?? "";
          const fs = await fsFigures(mount);
          assert.ok(fs, `statfs of "${mount}"`);
          return fs;
        },
        clock: systemClock,
        logger: new CaptureLogger(),
        warn: (reason, message) => warnings.push(`${reason}: ${message}`),
      }, {
        policy: {
          highThresholdPercent: 1,
          lowThresholdPercent: 0,
          minAgeMs: 0,
          maxAgeMs: 0,
        },
      });
      // low 0 %: all the used space should go, more than the images hold
      await assert.rejects(gc.collect(Date.now()), /eligible to free/);
      const after = (await runtime.listImages({})).images.map((i) => i.id);
      assert.equal(after.includes(busybox), false, "unused image removed");
      assert.equal(after.includes(pause), true, "image in use kept");
      assert.match(warnings.join("\n"), /^FreeDiskSpaceFailed: /m);
    } finally {
      await runtime.close?.();
      await criEnv("down", env).catch(() => {});
    }
  },
});
