import assert from "node:assert/strict";
import type { Pod } from "../api/mod.ts";
import { CaptureLogger } from "../log/testing.ts";
import {
  createMemoryVolumes,
  emptyDirMemorySize,
  memoryVolumeSize,
  type TmpfsVolume,
  type VolumeTmpfs,
} from "./memory_volumes.ts";

const TMPFS = 0x01021994;
const EXT4 = 0xef53;
const pod = {
  metadata: { uid: "u1" },
  spec: { containers: [] },
} as unknown as Pod;

function recorder(inMemory: Set<string>) {
  const calls: string[] = [];
  const tmpfs: VolumeTmpfs = {
    mountVolumeTmpfs(t: TmpfsVolume, size: number) {
      calls.push(`mount ${t.plugin}/${t.name} ${size}`);
      inMemory.add(t.name);
      return Promise.resolve();
    },
    unmountVolumeTmpfs(t: TmpfsVolume) {
      calls.push(`unmount ${t.plugin}/${t.name}`);
      return Promise.resolve(true);
    },
  };
  return { calls, tmpfs };
}

Deno.test("createMemoryVolumes() mounts fresh memory-backed volumes, keeps disk data, unmounts on release", async () => {
  const rootDir = await Deno.makeTempDir();
  const inMemory = new Set<string>();
  const { calls, tmpfs } = recorder(inMemory);
  const logger = new CaptureLogger();
  const volumes = createMemoryVolumes({
    logger,
    fsType: (path) =>
      Promise.resolve(
        inMemory.has(path.slice(path.lastIndexOf("/") + 1)) ? TMPFS : EXT4,
      ),
  }, { rootDir, access: { tmpfs }, sizeFor: () => 1234 });
  try {
    await volumes.prepare(pod, "kubernetes.io~secret", "s");
    await volumes.prepare(pod, "kubernetes.io~secret", "s"); // already tmpfs
    await volumes.prepare(pod, "kubernetes.io~configmap", "c");
    // a volume an older kubelet wrote to disk for a running pod stays there
    const old = `${rootDir}/pods/u1/volumes/kubernetes.io~projected/old`;
    await Deno.mkdir(old, { recursive: true });
    await Deno.writeTextFile(`${old}/token`, "t");
    await volumes.prepare(pod, "kubernetes.io~projected", "old");
    assert.deepEqual(calls, ["mount kubernetes.io~secret/s 1234"]);
    assert.equal(await Deno.readTextFile(`${old}/token`), "t");
    await volumes.release("u1");
    assert.deepEqual(calls.slice(1), ["unmount kubernetes.io~secret/s"]);
  } finally {
    await Deno.remove(rootDir, { recursive: true });
  }
});

Deno.test("createMemoryVolumes() without a mounter writes to disk and warns once with the reason", async () => {
  const rootDir = await Deno.makeTempDir();
  const logger = new CaptureLogger();
  const volumes = createMemoryVolumes({
    logger,
    fsType: () => Promise.resolve(EXT4),
  }, {
    rootDir,
    access: { reason: "no cgroup agent socket at /x" },
    sizeFor: () => 0,
  });
  try {
    await volumes.prepare(pod, "kubernetes.io~secret", "a");
    await volumes.prepare(pod, "kubernetes.io~projected", "b");
    const warnings = logger.records.filter((r) => r.severity === "warn");
    assert.equal(warnings.length, 1);
    assert.match(JSON.stringify(warnings[0]), /no cgroup agent socket at \/x/);
    assert.ok(
      (await Deno.lstat(`${rootDir}/pods/u1/volumes/kubernetes.io~projected/b`))
        .isDirectory,
    );
  } finally {
    await Deno.remove(rootDir, { recursive: true });
  }
});

Deno.test("memoryVolumeSize() is the pod's limit below the node's memory, else the node's", () => {
  assert.equal(memoryVolumeSize(8 << 30, 64 << 20), 64 << 20);
  assert.equal(memoryVolumeSize(1 << 30, 2 << 30), 1 << 30);
  assert.equal(memoryVolumeSize(1 << 30, undefined), 1 << 30);
  assert.equal(memoryVolumeSize(undefined, 5), 5);
  assert.equal(memoryVolumeSize(undefined, undefined), 0);
});

Deno.test("emptyDirMemorySize() is the sizeLimit when above zero and within the pod's size", () => {
  assert.equal(emptyDirMemorySize(1 << 30, 64 << 20), 64 << 20);
  assert.equal(emptyDirMemorySize(1 << 30, 2 << 30), 1 << 30);
  assert.equal(emptyDirMemorySize(1 << 30, 1 << 30), 1 << 30);
  assert.equal(emptyDirMemorySize(1 << 30, 0), 1 << 30);
  assert.equal(emptyDirMemorySize(1 << 30, undefined), 1 << 30);
  assert.equal(emptyDirMemorySize(0, 1.5), 2, "bytes rounded up; no pod size");
});

Deno.test("createMemoryVolumes() sizes an emptyDir's tmpfs by its sizeLimit", async () => {
  const rootDir = await Deno.makeTempDir();
  const { calls, tmpfs } = recorder(new Set());
  const volumes = createMemoryVolumes({
    logger: new CaptureLogger(),
    fsType: () => Promise.resolve(EXT4),
  }, { rootDir, access: { tmpfs }, sizeFor: () => 1 << 30 });
  try {
    await volumes.prepare(pod, "kubernetes.io~empty-dir", "e", 1 << 20);
    await volumes.prepare(pod, "kubernetes.io~empty-dir", "f");
    assert.deepEqual(calls, [
      `mount kubernetes.io~empty-dir/e ${1 << 20}`,
      `mount kubernetes.io~empty-dir/f ${1 << 30}`,
    ]);
  } finally {
    await Deno.remove(rootDir, { recursive: true });
  }
});
