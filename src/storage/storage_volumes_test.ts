import assert from "node:assert/strict";
import type { Pod } from "../api/mod.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createVolumeManager } from "../volume/mod.ts";
import {
  type CsiVolumeHost,
  type CsiVolumeRequest,
  type StorageVolumesDeps,
  withStorageVolumes,
} from "./storage_volumes.ts";
import {
  FakeClaimReader,
  FakeLocalBlockDevices,
  makeClaim,
  makeVolume,
} from "./testing.ts";

function makePod(volumes: unknown[], mounts: unknown[]): Pod {
  return {
    metadata: { name: "p", namespace: "ns", uid: "pod-uid" },
    spec: { volumes, containers: [{ name: "c", volumeMounts: mounts }] },
  } as unknown as Pod;
}

const CLAIM_POD = makePod(
  [{ name: "data", persistentVolumeClaim: { claimName: "c1" } }],
  [{ name: "data", mountPath: "/data" }],
);

async function withRoot(
  fn: (root: string, reader: FakeClaimReader) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    await fn(root, new FakeClaimReader());
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function manager(root: string, reader: FakeClaimReader) {
  return withStorageVolumes(
    createVolumeManager({ logger: new CaptureLogger() }, { rootDir: root }),
    { claims: reader, logger: new CaptureLogger() },
  );
}

const context = { expand: (s: string) => s, running: new Set<string>() };

async function failure(
  root: string,
  reader: FakeClaimReader,
  pod: Pod,
): Promise<string> {
  const got = await manager(root, reader).setUpPod(pod);
  assert.equal(got.ok, false);
  return got.ok ? "" : got.message;
}

const PREFIX =
  "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC ns/c1: ";

Deno.test("a claim that cannot be used yet fails the mount with upstream's text", async () => {
  await withRoot(async (root, reader) => {
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      `${PREFIX}failed to fetch PVC from API server: persistentvolumeclaims "c1" not found`,
    );
    reader.addClaim(makeClaim("ns", "c1", "", { phase: "Pending" }));
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      `${PREFIX}PVC is not bound`,
    );
    reader.addClaim(makeClaim("ns", "c1", "", { phase: "Bound" }));
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      `${PREFIX}PVC has empty pvc.Spec.VolumeName`,
    );
    reader.addClaim(makeClaim("ns", "c1", "pv1", { phase: "Lost" }));
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      `${PREFIX}PVC is not bound`,
    );
    reader.addClaim(makeClaim("ns", "c1", "pv1"));
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      `${PREFIX}failed to fetch PV pv1 from API server: persistentvolumes "pv1" not found`,
    );
    reader.addVolume(makeVolume("pv1", { hostPath: { path: root } }));
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      `${PREFIX}found PV object pv1 but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`,
    );
    reader.addVolume(makeVolume("pv1", { hostPath: { path: root } }, "x"));
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      `${PREFIX}found PV object pv1 but its pv.Spec.ClaimRef.UID x does not point to claim.UID claim-c1`,
    );
    const deleting = makeClaim("ns", "c1", "pv1");
    deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    reader.addClaim(deleting);
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      `${PREFIX}PVC is being deleted`,
    );
    // a protected claim being deleted is still usable (its pods keep running)
    deleting.metadata.finalizers = ["kubernetes.io/pvc-protection"];
    reader.addClaim(deleting);
    reader.addVolume(
      makeVolume("pv1", { hostPath: { path: root } }, "claim-c1"),
    );
    assert.deepEqual(await manager(root, reader).setUpPod(CLAIM_POD), {
      ok: true,
    });
  });
});

Deno.test("a claim no container mounts is not read, as upstream skips unused volumes", async () => {
  await withRoot(async (root, reader) => {
    const pod = makePod(
      [{ name: "unused", persistentVolumeClaim: { claimName: "pending" } }],
      [],
    );
    assert.deepEqual(await manager(root, reader).setUpPod(pod), { ok: true });
    assert.deepEqual(reader.calls, []);
  });
});

Deno.test("a bound hostPath PV is mounted from its path, read-only with the claim, read once", async () => {
  await withRoot(async (root, reader) => {
    const host = `${root}/host`;
    reader.addClaim(makeClaim("ns", "c1", "pv1"));
    reader.addVolume(makeVolume(
      "pv1",
      { hostPath: { path: host, type: "DirectoryOrCreate" } },
      "claim-c1",
    ));
    const volumes = manager(root, reader);
    assert.deepEqual(await volumes.setUpPod(CLAIM_POD), { ok: true });
    // the hostPath type check ran (DirectoryOrCreate made it)
    assert.ok((await Deno.stat(host)).isDirectory);
    const c = CLAIM_POD.spec.containers[0]!;
    assert.deepEqual(await volumes.containerMounts(CLAIM_POD, c, context), [{
      containerPath: "/data",
      hostPath: host,
      readonly: false,
      propagation: 0,
    }]);
    assert.deepEqual(await volumes.setUpPod(CLAIM_POD), { ok: true });
    assert.deepEqual(reader.calls, ["pvc ns/c1", "pv pv1"]);

    const ro = makePod(
      [{
        name: "data",
        persistentVolumeClaim: { claimName: "c1", readOnly: true },
      }],
      [{ name: "data", mountPath: "/data" }],
    );
    ro.metadata.uid = "other";
    assert.deepEqual(await volumes.setUpPod(ro), { ok: true });
    assert.equal(
      (await volumes.containerMounts(ro, ro.spec.containers[0]!, context))[0]
        ?.readonly,
      true,
    );
  });
});

Deno.test("a local PV is its directory; a file or a Block PV is refused", async () => {
  await withRoot(async (root, reader) => {
    await Deno.mkdir(`${root}/disk`);
    reader.addClaim(makeClaim("ns", "c1", "pv1"));
    reader.addVolume(
      makeVolume("pv1", { local: { path: `${root}/disk` } }, "claim-c1"),
    );
    const volumes = manager(root, reader);
    assert.deepEqual(await volumes.setUpPod(CLAIM_POD), { ok: true });
    assert.equal(
      (await volumes.containerMounts(
        CLAIM_POD,
        CLAIM_POD.spec.containers[0]!,
        context,
      ))[0]?.hostPath,
      `${root}/disk`,
    );

    // a link to a directory is followed: the runtime binds the directory itself
    await Deno.symlink(`${root}/disk`, `${root}/disk-link`);
    reader.addVolume(
      makeVolume("pv1", { local: { path: `${root}/disk-link` } }, "claim-c1"),
    );
    const linked = manager(root, reader);
    assert.deepEqual(await linked.setUpPod(CLAIM_POD), { ok: true });
    assert.equal(
      (await linked.containerMounts(
        CLAIM_POD,
        CLAIM_POD.spec.containers[0]!,
        context,
      ))[0]?.hostPath,
      `${root}/disk`,
    );

    await Deno.writeTextFile(`${root}/file`, "x");
    reader.addVolume(
      makeVolume("pv1", { local: { path: `${root}/file` } }, "claim-c1"),
    );
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      'MountVolume.SetUp failed for volume "pv1" : only directory and block device are supported',
    );
    reader.addVolume(makeVolume("pv1", {
      volumeMode: "Block",
      local: { path: `${root}/disk` },
    }, "claim-c1"));
    assert.equal(
      await failure(root, reader, CLAIM_POD),
      "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: volume data has volumeMode Block, but is specified in volumeMounts",
    );
    reader.addVolume(
      makeVolume("pv1", { nfs: { server: "s", path: "/" } }, "claim-c1"),
    );
    assert.match(
      await failure(root, reader, CLAIM_POD),
      /^MountVolume.SetUp failed for volume "pv1" : nfs persistent volumes are not supported by this kubelet/,
    );
    reader.addVolume(makeVolume("pv1", {
      csi: { driver: "d", volumeHandle: "h" },
    }, "claim-c1"));
    assert.match(
      await failure(root, reader, CLAIM_POD),
      /^MountVolume.SetUp failed for volume "pv1" : csi volumes need the CSI node side/,
    );
  });
});

Deno.test("an ephemeral volume's claim is <pod>-<volume> and must be controlled by the pod", async () => {
  await withRoot(async (root, reader) => {
    const pod = makePod(
      [{ name: "scratch", ephemeral: { volumeClaimTemplate: { spec: {} } } }],
      [{ name: "scratch", mountPath: "/s" }],
    );
    reader.addClaim(makeClaim("ns", "p-scratch", "pv1", { owner: "someone" }));
    reader.addVolume(
      makeVolume("pv1", { hostPath: { path: root } }, "claim-p-scratch"),
    );
    assert.equal(
      await failure(root, reader, pod),
      "Unable to attach or mount volumes: unmounted volumes=[scratch], unattached volumes=[], failed to process volumes=[scratch]: PVC ns/p-scratch was not created for pod ns/p (pod is not owner)",
    );
    reader.addClaim(makeClaim("ns", "p-scratch", "pv1", { owner: "pod-uid" }));
    assert.deepEqual(await manager(root, reader).setUpPod(pod), { ok: true });
  });
});

Deno.test("CSI volumes go to the CSI host; a failed unpublish keeps the pod's volume directories", async () => {
  await withRoot(async (root, reader) => {
    const requests: CsiVolumeRequest[] = [];
    let clean = false;
    const csi: CsiVolumeHost = {
      setUp(_pod, request) {
        requests.push(request);
        return Promise.resolve(`${root}/published/${request.specName}`);
      },
      tearDownPod: () => Promise.resolve(clean),
    };
    reader.addClaim(makeClaim("ns", "c1", "pv1"));
    reader.addVolume(makeVolume("pv1", {
      accessModes: ["ReadWriteOnce"],
      csi: { driver: "d", volumeHandle: "h", readOnly: true },
    }, "claim-c1"));
    const volumes = withStorageVolumes(
      createVolumeManager({ logger: new CaptureLogger() }, { rootDir: root }),
      { claims: reader, logger: new CaptureLogger(), csi },
    );
    const pod = makePod([
      { name: "data", persistentVolumeClaim: { claimName: "c1" } },
      { name: "eph", csi: { driver: "d", volumeAttributes: { a: "b" } } },
      { name: "scratch", emptyDir: {} },
    ], [
      { name: "data", mountPath: "/data" },
      { name: "eph", mountPath: "/eph" },
    ]);
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    assert.deepEqual(
      requests.map((r) => [r.volume, r.specName, r.inline, r.readOnly]),
      [["data", "pv1", false, true], ["eph", "eph", true, false]],
    );
    const mounts = await volumes.containerMounts(
      pod,
      pod.spec.containers[0]!,
      context,
    );
    assert.deepEqual(mounts.map((m) => [m.hostPath, m.readonly]), [
      [`${root}/published/pv1`, true],
      [`${root}/published/eph`, false],
    ]);
    const scratch =
      `${root}/pods/pod-uid/volumes/kubernetes.io~empty-dir/scratch`;
    await volumes.tearDownPod(pod);
    assert.ok((await Deno.stat(scratch)).isDirectory);
    clean = true;
    await volumes.tearDownPod(pod);
    await assert.rejects(Deno.stat(scratch));
  });
});

Deno.test({
  name:
    "a local PV's directory (not what is in it) goes to the pod's fsGroup on its first writable mount only",
  ignore: Deno.uid() !== 0,
  async fn() {
    await withRoot(async (root, reader) => {
      await Deno.mkdir(`${root}/disk/sub`, { recursive: true });
      reader.addClaim(makeClaim("ns", "c1", "pv1"));
      reader.addVolume(
        makeVolume("pv1", { local: { path: `${root}/disk` } }, "claim-c1"),
      );
      const volumes = manager(root, reader);
      const withGroup = (uid: string, fsGroup: number) =>
        ({
          ...CLAIM_POD,
          metadata: { ...CLAIM_POD.metadata, uid, name: uid },
          spec: { ...CLAIM_POD.spec, securityContext: { fsGroup } },
        }) as Pod;
      const gid = async (path: string) => (await Deno.stat(path)).gid;
      assert.deepEqual(await volumes.setUpPod(withGroup("u1", 4321)), {
        ok: true,
      });
      assert.equal(await gid(`${root}/disk`), 4321);
      // setgid: what containers make inherits the group
      assert.equal((await Deno.stat(`${root}/disk`)).mode! & 0o2070, 0o2070);
      // what containers wrote before is left alone: they may still be running
      const before = await gid(`${root}/disk/sub`);
      assert.notEqual(before, 4321);
      // a second pod while the first has it mounted leaves the ownership alone
      assert.deepEqual(await volumes.setUpPod(withGroup("u2", 5432)), {
        ok: true,
      });
      assert.equal(await gid(`${root}/disk`), 4321);
      // once the others are gone, the next pod's first mount sets it again
      await volumes.tearDownPod(withGroup("u1", 4321));
      await volumes.tearDownPod(withGroup("u2", 5432));
      assert.deepEqual(await volumes.setUpPod(withGroup("u3", 6543)), {
        ok: true,
      });
      assert.equal(await gid(`${root}/disk`), 6543);
      assert.equal(await gid(`${root}/disk/sub`), before);

      // a link to the directory (upstream's dir-link volumes): the directory gets the group
      await Deno.mkdir(`${root}/target`);
      await Deno.symlink(`${root}/target`, `${root}/link`);
      reader.addVolume(
        makeVolume("pv1", { local: { path: `${root}/link` } }, "claim-c1"),
      );
      assert.deepEqual(
        await manager(root, reader).setUpPod(withGroup("u4", 7654)),
        { ok: true },
      );
      assert.equal(await gid(`${root}/target`), 7654);
    });
  },
});

function blockManager(
  root: string,
  reader: FakeClaimReader,
  localBlock: StorageVolumesDeps["localBlock"],
) {
  return withStorageVolumes(
    createVolumeManager({ logger: new CaptureLogger() }, { rootDir: root }),
    {
      claims: reader,
      logger: new CaptureLogger(),
      rootDir: root,
      ...(localBlock ? { localBlock } : {}),
    },
  );
}

Deno.test("a local PV on a block device is mounted on the pod's directory, and unmounted before the directories go", async () => {
  await withRoot(async (root, reader) => {
    const devices = new FakeLocalBlockDevices(root);
    devices.blockDevices.add("/dev/loop7");
    reader.addClaim(makeClaim("ns", "c1", "pv1"));
    reader.addVolume(makeVolume("pv1", {
      local: { path: "/dev/loop7", fsType: "xfs" },
    }, "claim-c1"));
    const volumes = blockManager(root, reader, { devices });
    assert.deepEqual(await volumes.setUpPod(CLAIM_POD), { ok: true });
    const dir = `${root}/pods/pod-uid/volumes/kubernetes.io~local-volume/pv1`;
    assert.deepEqual(devices.calls, [
      "isBlockDevice /dev/loop7",
      "mount pod-uid/pv1 /dev/loop7 xfs rw",
    ]);
    const mounts = await volumes.containerMounts(
      CLAIM_POD,
      CLAIM_POD.spec.containers[0]!,
      context,
    );
    assert.deepEqual(mounts.map((m) => [m.containerPath, m.hostPath]), [
      ["/data", dir],
    ]);
    // a file system mount is no device
    assert.deepEqual(
      volumes.containerDevices?.(CLAIM_POD, CLAIM_POD.spec.containers[0]!),
      [],
    );

    // a failed unmount keeps every volume directory: a removal would reach the device's files
    devices.failUnmount = true;
    await Deno.writeTextFile(`${dir}/on-the-device`, "data");
    await volumes.tearDownPod(CLAIM_POD);
    assert.equal(await Deno.readTextFile(`${dir}/on-the-device`), "data");

    // a kubelet started again (nothing in memory) still unmounts what the pod's directory holds
    devices.failUnmount = false;
    devices.calls = [];
    await Deno.remove(`${dir}/on-the-device`);
    await blockManager(root, reader, { devices }).tearDownPod(CLAIM_POD);
    assert.deepEqual(devices.calls, ["unmount pod-uid/pv1"]);
    assert.equal(devices.mounted.size, 0);
    await assert.rejects(Deno.stat(`${root}/pods/pod-uid/volumes`));
  });
});

Deno.test("a local PV on a block device without a mounter, or not a device, fails its mount and says why", async () => {
  await withRoot(async (root, reader) => {
    reader.addClaim(makeClaim("ns", "c1", "pv1"));
    reader.addVolume(
      makeVolume("pv1", { local: { path: "/dev/loop7" } }, "claim-c1"),
    );
    const none = await blockManager(root, reader, {
      reason: "no cgroup agent answers",
    }).setUpPod(CLAIM_POD);
    assert.equal(none.ok, false);
    assert.match(
      none.ok ? "" : none.message,
      /^MountVolume.SetUp failed for volume "pv1" : local volume \/dev\/loop7: a block device is looked at, formatted, mounted and mapped by the cgroup agent or by a kubelet with every permission \(no cgroup agent answers;/,
    );
    const devices = new FakeLocalBlockDevices(root);
    const missing = await blockManager(root, reader, { devices }).setUpPod(
      CLAIM_POD,
    );
    assert.equal(
      missing.ok ? "" : missing.message,
      'MountVolume.SetUp failed for volume "pv1" : path "/dev/loop7" does not exist',
    );
    // something below /dev that is no block device: stat decides
    devices.otherDevices.add("/dev/loop7");
    const other = await withStorageVolumes(
      createVolumeManager({ logger: new CaptureLogger() }, { rootDir: root }),
      {
        claims: reader,
        logger: new CaptureLogger(),
        rootDir: root,
        localBlock: { devices },
        stat: (path) =>
          path === "/dev/loop7"
            ? Promise.resolve({ isDirectory: false } as Deno.FileInfo)
            : Deno.stat(path),
      },
    ).setUpPod(CLAIM_POD);
    assert.equal(
      other.ok ? "" : other.message,
      'MountVolume.SetUp failed for volume "pv1" : only directory and block device are supported',
    );
    assert.equal(devices.mounted.size, 0);
  });
});

Deno.test("a Block PV in volumeDevices is the container's device: mrw, r for a read-only claim; no mount", async () => {
  await withRoot(async (root, reader) => {
    const devices = new FakeLocalBlockDevices(root);
    devices.blockDevices.add("/dev/loop8");
    const pod = {
      metadata: { name: "p", namespace: "ns", uid: "pod-uid" },
      spec: {
        volumes: [{ name: "data", persistentVolumeClaim: { claimName: "c1" } }],
        containers: [{
          name: "c",
          volumeDevices: [{ name: "data", devicePath: "/mnt/volume1" }],
        }],
      },
    } as unknown as Pod;
    reader.addClaim(makeClaim("ns", "c1", "pv1"));
    reader.addVolume(makeVolume("pv1", {
      volumeMode: "Block",
      local: { path: "/dev/loop8" },
    }, "claim-c1"));
    const volumes = blockManager(root, reader, { devices });
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    assert.deepEqual(devices.calls, ["isBlockDevice /dev/loop8"]);
    assert.deepEqual(volumes.containerDevices?.(pod, pod.spec.containers[0]!), [
      {
        containerPath: "/mnt/volume1",
        hostPath: "/dev/loop8",
        permissions: "mrw",
      },
    ]);
    assert.deepEqual(
      await volumes.containerMounts(pod, pod.spec.containers[0]!, context),
      [],
    );

    const readOnly = {
      ...pod,
      metadata: { ...pod.metadata, uid: "ro-uid" },
      spec: {
        ...pod.spec,
        volumes: [{
          name: "data",
          persistentVolumeClaim: { claimName: "c1", readOnly: true },
        }],
      },
    } as unknown as Pod;
    assert.deepEqual(await volumes.setUpPod(readOnly), { ok: true });
    assert.deepEqual(
      volumes.containerDevices?.(readOnly, readOnly.spec.containers[0]!),
      [{
        containerPath: "/mnt/volume1",
        hostPath: "/dev/loop8",
        permissions: "r",
      }],
    );

    // a Filesystem PV cannot be a device; a Block PV that is no device is refused
    reader.addVolume(
      makeVolume("pv1", { local: { path: "/dev/loop8" } }, "claim-c1"),
    );
    const mismatch = await blockManager(root, reader, { devices }).setUpPod(
      pod,
    );
    assert.match(
      mismatch.ok ? "" : mismatch.message,
      /volume data has volumeMode Filesystem, but is specified in volumeDevices$/,
    );
    devices.otherDevices.add("/dev/null");
    reader.addVolume(makeVolume("pv1", {
      volumeMode: "Block",
      local: { path: "/dev/null" },
    }, "claim-c1"));
    const notBlock = await blockManager(root, reader, { devices }).setUpPod(
      pod,
    );
    assert.equal(
      notBlock.ok ? "" : notBlock.message,
      'MountVolume.SetUp failed for volume "pv1" : local volume /dev/null is not a block device',
    );
  });
});
