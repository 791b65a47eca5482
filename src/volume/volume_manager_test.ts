import assert from "node:assert/strict";
import type { Pod } from "../api/mod.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createVolumeManager } from "./volume_manager.ts";
import type { MemoryVolumes } from "./memory_volumes.ts";

const TMPFS = 0x01021994;

function makePod(volumes: unknown[], labels = { app: "a" }): Pod {
  return {
    metadata: { name: "p", namespace: "ns", uid: "uid-1", labels },
    spec: {
      volumes,
      containers: [
        {
          name: "c",
          volumeMounts: [
            { name: "scratch", mountPath: "/s" },
            { name: "info", mountPath: "/i", readOnly: false },
            { name: "scratch", mountPath: "/sub", subPathExpr: "$(DIR)/x" },
            {
              name: "scratch",
              mountPath: "/hc",
              mountPropagation: "HostToContainer",
            },
          ],
        },
        { name: "w", volumeMounts: [{ name: "scratch", mountPath: "/w" }] },
      ],
    },
  } as unknown as Pod;
}

const VOLUMES = [
  { name: "scratch", emptyDir: {} },
  {
    name: "info",
    downwardAPI: {
      items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }],
    },
  },
];

Deno.test("VolumeManager sets up, mounts, refreshes and tears down a pod's volumes", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const volumes = createVolumeManager({ logger: new CaptureLogger() }, {
      rootDir: root,
      writerLayout: "symlinks",
    });
    const pod = makePod(VOLUMES);
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    const vols = `${root}/pods/uid-1/volumes`;
    const scratch = `${vols}/kubernetes.io~empty-dir/scratch`;
    assert.equal((await Deno.stat(scratch)).mode! & 0o777, 0o777);
    const info = `${vols}/kubernetes.io~downward-api/info`;
    assert.equal(await Deno.readTextFile(`${info}/labels`), 'app="a"');

    const mounts = await volumes.containerMounts(pod, pod.spec.containers[0]!, {
      expand: (expr) => expr.replace("$(DIR)", "dir"),
      running: new Set(),
    });
    assert.deepEqual(mounts, [
      {
        containerPath: "/s",
        hostPath: scratch,
        readonly: false,
        propagation: 0,
      },
      { containerPath: "/i", hostPath: info, readonly: true, propagation: 0 },
      {
        containerPath: "/sub",
        hostPath: `${scratch}/dir/x`,
        readonly: false,
        propagation: 0,
      },
      {
        containerPath: "/hc",
        hostPath: scratch,
        readonly: false,
        propagation: 1,
      },
    ]);
    assert.ok((await Deno.stat(`${scratch}/dir/x`)).isDirectory);
    // a running writer of the volume blocks the subPath
    await assert.rejects(
      volumes.containerMounts(pod, pod.spec.containers[0]!, {
        expand: (expr) => expr.replace("$(DIR)", "dir"),
        running: new Set(["w"]),
      }),
      /while container "w" can write that volume and is running/,
    );

    // labels change (an API pod update): the files follow
    const before = await Deno.readLink(`${info}/..data`);
    assert.deepEqual(await volumes.setUpPod(makePod(VOLUMES, { app: "b" })), {
      ok: true,
    });
    assert.equal(await Deno.readTextFile(`${info}/labels`), 'app="b"');
    assert.notEqual(await Deno.readLink(`${info}/..data`), before);

    await volumes.tearDownPod(pod);
    await assert.rejects(Deno.lstat(vols));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("VolumeManager.setUpPod() reports FailedMount with the volume and the reason", async () => {
  const root = await Deno.makeTempDir();
  try {
    const volumes = createVolumeManager({
      logger: new CaptureLogger(),
      fsType: () => Promise.resolve(0xef53),
    }, { rootDir: root, memoryDir: `${root}/mem` });
    const cases: [unknown, RegExp][] = [
      [
        { name: "cfg", configMap: { name: "x" } },
        /^MountVolume\.SetUp failed for volume "cfg" : configMap volumes need objects from the API server, and this kubelet runs without one/,
      ],
      [
        { name: "n", nfs: { server: "s", path: "/" } },
        /^MountVolume\.SetUp failed for volume "n" : nfs volumes are not supported by this kubelet: it mounts no file systems itself/,
      ],
      [
        { name: "h", hostPath: { path: `${root}/missing`, type: "Directory" } },
        /^MountVolume\.SetUp failed for volume "h" : hostPath type check failed: .*missing is not a directory$/,
      ],
      [
        { name: "m", emptyDir: { medium: "Memory" } },
        /volume "m" : medium "Memory" needs a tmpfs/,
      ],
      [
        { name: "bad", emptyDir: { medium: "HugePages" } },
        /spec\.volumes\[0\]\.emptyDir\.medium: unsupported medium "HugePages"/,
      ],
    ];
    for (const [volume, message] of cases) {
      const result = await volumes.setUpPod(makePod([volume]));
      assert.equal(result.ok, false);
      assert.match(result.ok ? "" : result.message, message);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/** Bytes the entries take on disk (512-byte blocks), as `du` counts them. */
async function blocksOf(...paths: string[]): Promise<number> {
  let total = 0;
  for (const p of paths) total += (await Deno.lstat(p)).blocks! * 512;
  return total;
}

Deno.test("VolumeManager puts Memory emptyDirs under the tmpfs dir and removes them with the pod", async () => {
  const root = await Deno.makeTempDir();
  try {
    const logger = new CaptureLogger();
    const volumes = createVolumeManager({
      logger,
      fsType: () => Promise.resolve(TMPFS),
    }, { rootDir: root, memoryDir: `${root}/mem` });
    const pod = makePod([{
      name: "m",
      emptyDir: { medium: "Memory", sizeLimit: "8" },
    }, { name: "d", emptyDir: { sizeLimit: "1k" } }]);
    assert.deepEqual(await volumes.emptyDirUsage?.(pod), [], "not set up yet");
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    // the mode of a fresh tmpfs root, as upstream's tmpfs per volume; a disk one has no sticky bit
    assert.equal(
      (await Deno.stat(`${root}/mem/uid-1/m`)).mode! & 0o7777,
      0o1777,
    );
    assert.equal(
      (await Deno.stat(`${root}/pods/uid-1/volumes/kubernetes.io~empty-dir/d`))
        .mode! & 0o7777,
      0o777,
    );
    await Deno.writeTextFile(`${root}/mem/uid-1/m/fits`, "12345678");
    await Deno.mkdir(`${root}/mem/uid-1/m/sub`);
    await Deno.writeTextFile(`${root}/mem/uid-1/m/sub/more`, "9");
    // What they take on disk, each volume's own directory included (upstream's `du`)
    const m = `${root}/mem/uid-1/m`;
    const d = `${root}/pods/uid-1/volumes/kubernetes.io~empty-dir/d`;
    assert.deepEqual(await volumes.emptyDirUsage?.(pod), [
      {
        volume: "m",
        memory: true,
        sizeLimit: "8",
        bytes: await blocksOf(m, `${m}/fits`, `${m}/sub`, `${m}/sub/more`),
      },
      { volume: "d", memory: false, sizeLimit: "1k", bytes: await blocksOf(d) },
    ]);
    await volumes.tearDownPod(pod);
    await assert.rejects(Deno.lstat(`${root}/mem/uid-1`));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("VolumeManager puts a Memory emptyDir on a tmpfs of its own when one is mounted, else in the memory dir", async () => {
  const root = await Deno.makeTempDir();
  try {
    const mounted = new Set<string>();
    const prepared: string[] = [];
    const memoryVolumes: MemoryVolumes = {
      async prepare(_pod, plugin, name, sizeLimitBytes) {
        const dir = `${root}/pods/uid-1/volumes/${plugin}/${name}`;
        await Deno.mkdir(dir, { recursive: true });
        prepared.push(`${plugin}/${name} ${sizeLimitBytes}`);
        if (name === "m") mounted.add(dir);
        return dir;
      },
      release: () => Promise.resolve(),
    };
    const volumes = createVolumeManager({
      logger: new CaptureLogger(),
      memoryVolumes,
      fsType: (path) =>
        Promise.resolve(
          mounted.has(path) || path.startsWith(`${root}/mem`) ? TMPFS : 0xef53,
        ),
    }, { rootDir: root, memoryDir: `${root}/mem` });
    const pod = makePod([
      { name: "m", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
      { name: "n", emptyDir: { medium: "Memory" } },
    ]);
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    assert.deepEqual(prepared, [
      `kubernetes.io~empty-dir/m ${1 << 20}`,
      "kubernetes.io~empty-dir/n undefined",
    ]);
    const tmpfs = `${root}/pods/uid-1/volumes/kubernetes.io~empty-dir/m`;
    assert.equal((await Deno.stat(tmpfs)).mode! & 0o7777, 0o1777);
    // no tmpfs came on "n": it lives in the memory dir, its empty disk directory is gone
    assert.ok((await Deno.stat(`${root}/mem/uid-1/n`)).isDirectory);
    await assert.rejects(
      Deno.lstat(`${root}/pods/uid-1/volumes/kubernetes.io~empty-dir/n`),
    );
    // the pod's volume is the tmpfs directory: what is written there is what it holds
    await Deno.writeTextFile(`${tmpfs}/f`, "abc");
    const n = `${root}/mem/uid-1/n`;
    assert.deepEqual(
      (await volumes.emptyDirUsage?.(pod))?.map((u) => [u.volume, u.bytes]),
      [["m", await blocksOf(tmpfs, `${tmpfs}/f`)], ["n", await blocksOf(n)]],
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test({
  name:
    "VolumeManager gives a new emptyDir and downwardAPI files to the pod's fsGroup",
  ignore: Deno.uid() !== 0,
  async fn() {
    const root = await Deno.makeTempDir();
    try {
      const volumes = createVolumeManager({ logger: new CaptureLogger() }, {
        rootDir: root,
        writerLayout: "symlinks",
      });
      const pod = makePod(VOLUMES);
      pod.spec.securityContext = { fsGroup: 2345 };
      assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
      const vols = `${root}/pods/uid-1/volumes`;
      const scratch = await Deno.stat(
        `${vols}/kubernetes.io~empty-dir/scratch`,
      );
      assert.equal(scratch.gid, 2345);
      assert.equal(scratch.mode! & 0o7777, 0o2777);
      const labels = await Deno.stat(
        `${vols}/kubernetes.io~downward-api/info/labels`,
      );
      assert.equal(labels.gid, 2345);
      assert.equal(labels.mode! & 0o7777, 0o644);
      // a later sync leaves the emptyDir's owner and mode alone
      await Deno.chmod(`${vols}/kubernetes.io~empty-dir/scratch`, 0o2770);
      await volumes.setUpPod(pod);
      assert.equal(
        (await Deno.stat(`${vols}/kubernetes.io~empty-dir/scratch`)).mode! &
          0o7777,
        0o2770,
      );
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("VolumeManager.containerMounts() refuses a subPath that leads out of its volume by naming the mount, the host paths only in the log", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const logger = new CaptureLogger();
    const volumes = createVolumeManager({ logger }, { rootDir: root });
    const pod = {
      metadata: { name: "p", namespace: "ns", uid: "uid-1" },
      spec: {
        volumes: [{ name: "scratch", emptyDir: {} }],
        containers: [{
          name: "c",
          volumeMounts: [{ name: "scratch", mountPath: "/t", subPath: "out" }],
        }],
      },
    } as unknown as Pod;
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    const scratch =
      `${root}/pods/uid-1/volumes/kubernetes.io~empty-dir/scratch`;
    // what an init container's `ln -s /bin /volume/out` leaves
    await Deno.symlink("/bin", `${scratch}/out`);
    await assert.rejects(
      volumes.containerMounts(pod, pod.spec.containers[0]!, {
        expand: (expr) => expr,
        running: new Set(),
      }),
      (error: Error) => {
        assert.ok(error instanceof RangeError);
        assert.equal(
          error.message,
          'failed to prepare subPath for volumeMount "scratch" of container "c"',
        );
        return true;
      },
    );
    const record = logger.records.find((r) =>
      r.msg === "Failed to prepare subPath for volumeMount of the container"
    );
    assert.match(String(record?.fields?.err), /not within volume path/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("VolumeManager.containerMounts() refuses a mount that must be recursively read-only, which the runtime cannot make", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const volumes = createVolumeManager({ logger: new CaptureLogger() }, {
      rootDir: root,
      writerLayout: "symlinks",
    });
    const pod = {
      metadata: { name: "p", namespace: "ns", uid: "uid-rro" },
      spec: {
        volumes: [{ name: "scratch", emptyDir: {} }],
        containers: [{
          name: "c",
          volumeMounts: [{
            name: "scratch",
            mountPath: "/s",
            readOnly: true,
            recursiveReadOnly: "Enabled",
          }],
        }, {
          name: "d",
          volumeMounts: [{
            name: "scratch",
            mountPath: "/s",
            readOnly: true,
            recursiveReadOnly: "IfPossible",
          }],
        }],
      },
    } as unknown as Pod;
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    const context = { expand: (e: string) => e, running: new Set<string>() };
    await assert.rejects(
      volumes.containerMounts(pod, pod.spec.containers[0]!, context),
      /volume "scratch" requested recursive read-only mode, but it is not supported by the runtime/,
    );
    // IfPossible falls back to a plain read-only mount
    const [mount] = await volumes.containerMounts(
      pod,
      pod.spec.containers[1]!,
      context,
    );
    assert.equal(mount?.readonly, true);
    await volumes.tearDownPod(pod);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("VolumeManager.containerMounts() pins each subPath with the binder and then ignores running writers", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const calls: string[] = [];
    let refuse = false;
    const logger = new CaptureLogger();
    const volumes = createVolumeManager({
      logger,
      subPaths: {
        binds: {
          bindSubPath(pin, source) {
            calls.push(
              `${pin.uid} ${pin.volume} ${pin.container} ${pin.index} ${
                source.path.slice(source.volumePath.length)
              }`,
            );
            if (refuse) {
              return Promise.reject(
                new Deno.errors.PermissionDenied("leads to /etc"),
              );
            }
            return Promise.resolve(`/pins/${pin.index}`);
          },
          cleanSubPaths(uid) {
            calls.push(`clean ${uid}`);
            return Promise.resolve();
          },
        },
      },
    }, { rootDir: root, writerLayout: "symlinks" });
    const pod = makePod(VOLUMES);
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    const context = {
      expand: (expr: string) => expr.replace("$(DIR)", "dir"),
      running: new Set(["w"]), // a writer runs: the pin makes that safe
    };
    const mounts = await volumes.containerMounts(
      pod,
      pod.spec.containers[0]!,
      context,
    );
    assert.equal(mounts[2]?.hostPath, "/pins/2");
    assert.equal(mounts[0]?.hostPath.endsWith("/scratch"), true);
    assert.deepEqual(calls, ["uid-1 scratch c 2 /dir/x"]);
    // a refused bind fails the start with upstream's message, the reason only in the log
    refuse = true;
    await assert.rejects(
      volumes.containerMounts(pod, pod.spec.containers[0]!, context),
      /^RangeError: failed to prepare subPath for volumeMount "scratch" of container "c"$/,
    );
    assert.match(JSON.stringify(logger.records), /leads to \/etc/);
    await volumes.tearDownPod(pod);
    assert.equal(calls.at(-1), "clean uid-1");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("VolumeManager without a binder keeps the writer rule and says why once", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const logger = new CaptureLogger();
    const volumes = createVolumeManager({
      logger,
      subPaths: { reason: "no cgroup agent socket at /x" },
    }, { rootDir: root, writerLayout: "symlinks" });
    const pod = makePod(VOLUMES);
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    await assert.rejects(
      volumes.containerMounts(pod, pod.spec.containers[0]!, {
        expand: (expr) => expr.replace("$(DIR)", "dir"),
        running: new Set(["w"]),
      }),
      /while container "w" can write that volume and is running/,
    );
    const warned = logger.records.filter((r) =>
      /subPath mounts are not pinned/.test(JSON.stringify(r))
    );
    assert.equal(warned.length, 1);
    assert.match(JSON.stringify(warned[0]), /no cgroup agent socket at \/x/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
