import assert from "node:assert/strict";
import {
  ApiNotFoundError,
  type CsiDriver,
  type Pod,
  type VolumeAttachment,
} from "../api/mod.ts";
import { CaptureLogger } from "../log/testing.ts";
import type { CsiVolumeRequest } from "../storage/mod.ts";
import {
  attachmentName,
  createCsiVolumes,
  inlineVolumeHandle,
  sha256Hex,
  stagingPath,
} from "./csi_volumes.ts";
import { FakeCsiNodeClient } from "./testing.ts";
import type { PublishRequest, StageRequest } from "./csi_client.ts";

const DRIVER = "d.example.com";

function pod(uid: string): Pod {
  return {
    metadata: { name: "p", namespace: "ns", uid },
    spec: { containers: [], serviceAccountName: "sa" },
  } as unknown as Pod;
}

function request(over: Partial<CsiVolumeRequest> = {}): CsiVolumeRequest {
  return {
    volume: "data",
    specName: "pv1",
    source: {
      driver: DRIVER,
      volumeHandle: "vol-1",
      volumeAttributes: { color: "blue" },
      fsType: "ext4",
    },
    readOnly: false,
    inline: false,
    persistentVolume: {
      metadata: { name: "pv1" },
      spec: { accessModes: ["ReadWriteOnce"], mountOptions: ["noatime"] },
    },
    ...over,
  };
}

async function fixture(
  driver: CsiDriver | undefined,
  attachments: Map<string, VolumeAttachment> = new Map(),
) {
  const root = await Deno.realPath(await Deno.makeTempDir());
  const client = new FakeCsiNodeClient();
  const volumes = createCsiVolumes({
    logger: new CaptureLogger(),
    drivers: {
      get: (name) =>
        name === DRIVER
          ? {
            name,
            endpoint: "/sock",
            registrationSocket: "/reg",
            version: "1.0.0",
          }
          : undefined,
      names: () => [DRIVER],
    },
    api: {
      getCsiDriver: () =>
        driver
          ? Promise.resolve(driver)
          : Promise.reject(new ApiNotFoundError("not found", { code: 404 })),
      getVolumeAttachment: (name) => {
        const va = attachments.get(name);
        return va ? Promise.resolve(va) : Promise.reject(
          new ApiNotFoundError(
            `volumeattachments.storage.k8s.io "${name}" not found`,
            { code: 404 },
          ),
        );
      },
    },
    csi: () => client,
  }, { rootDir: root, nodeName: "n1" });
  return { root, client, volumes };
}

const NO_ATTACH: CsiDriver = {
  metadata: { name: DRIVER },
  spec: {
    attachRequired: false,
    podInfoOnMount: true,
    volumeLifecycleModes: ["Persistent", "Ephemeral"],
  },
};

Deno.test("a PV is staged at upstream's global path and published at the pod's path with its context", async () => {
  const { root, client, volumes } = await fixture(NO_ATTACH);
  try {
    const target = await volumes.setUp(pod("u1"), request());
    assert.equal(target, `${root}/pods/u1/volumes/kubernetes.io~csi/pv1/mount`);
    const staging =
      `${root}/plugins/kubernetes.io/csi/${DRIVER}/${await sha256Hex(
        "vol-1",
      )}/globalmount`;
    assert.equal(await stagingPath(root, DRIVER, "vol-1"), staging);
    assert.ok((await Deno.stat(staging)).isDirectory);
    const stage = client.of("NodeStageVolume")[0] as StageRequest;
    assert.deepEqual(stage, {
      volumeId: "vol-1",
      publishContext: {},
      stagingTargetPath: staging,
      capability: {
        accessMode: "SINGLE_NODE_WRITER",
        fsType: "ext4",
        mountFlags: ["noatime"],
      },
      secrets: {},
      volumeContext: { color: "blue" },
    });
    const publish = client.of("NodePublishVolume")[0] as PublishRequest;
    assert.equal(publish.stagingTargetPath, staging);
    assert.equal(publish.targetPath, target);
    assert.deepEqual(publish.volumeContext, {
      color: "blue",
      "csi.storage.k8s.io/pod.name": "p",
      "csi.storage.k8s.io/pod.namespace": "ns",
      "csi.storage.k8s.io/pod.uid": "u1",
      "csi.storage.k8s.io/serviceAccount.name": "sa",
      "csi.storage.k8s.io/ephemeral": "false",
    });
    assert.deepEqual(
      JSON.parse(
        await Deno.readTextFile(
          `${root}/pods/u1/volumes/kubernetes.io~csi/pv1/vol_data.json`,
        ),
      ),
      {
        specVolID: "pv1",
        volumeHandle: "vol-1",
        driverName: DRIVER,
        nodeName: "n1",
        volumeLifecycleMode: "Persistent",
        attachmentID: await attachmentName("vol-1", DRIVER, "n1"),
      },
    );

    // a second pod of the same volume: the teardown of the first does not unstage
    await volumes.setUp(pod("u2"), request());
    assert.equal(await volumes.tearDownPod(pod("u1")), true);
    assert.deepEqual(client.of("NodeUnpublishVolume"), [{
      volumeId: "vol-1",
      targetPath: target,
    }]);
    assert.deepEqual(client.of("NodeUnstageVolume"), []);
    await assert.rejects(
      Deno.stat(`${root}/pods/u1/volumes/kubernetes.io~csi/pv1`),
    );
    assert.equal(await volumes.tearDownPod(pod("u2")), true);
    assert.deepEqual(client.of("NodeUnstageVolume"), [{
      volumeId: "vol-1",
      stagingTargetPath: staging,
    }]);
    await assert.rejects(Deno.stat(staging));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an inline volume is published without staging, with upstream's handle, and must be allowed", async () => {
  const { root, client, volumes } = await fixture(NO_ATTACH);
  try {
    const inline = request({
      specName: "eph",
      inline: true,
      source: { driver: DRIVER, volumeHandle: "" },
    });
    delete inline.persistentVolume;
    await volumes.setUp(pod("u1"), inline);
    assert.deepEqual(client.of("NodeStageVolume"), []);
    const publish = client.of("NodePublishVolume")[0] as PublishRequest;
    assert.equal(publish.volumeId, await inlineVolumeHandle("u1", "eph"));
    assert.equal(publish.stagingTargetPath, "");
    assert.equal(
      publish.volumeContext["csi.storage.k8s.io/ephemeral"],
      "true",
    );
    assert.equal(await volumes.tearDownPod(pod("u1")), true);
    assert.deepEqual(client.of("NodeUnstageVolume"), []);

    const persistentOnly = await fixture({
      metadata: { name: DRIVER },
      spec: { attachRequired: false },
    });
    await assert.rejects(
      persistentOnly.volumes.setUp(pod("u1"), inline),
      /volume mode "Ephemeral" not supported by driver d.example.com \(only supports \["Persistent"\]\)/,
    );
    await Deno.remove(persistentOnly.root, { recursive: true });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("attachRequired waits for the VolumeAttachment and passes its metadata", async () => {
  const attachments = new Map<string, VolumeAttachment>();
  const { root, client, volumes } = await fixture({
    metadata: { name: DRIVER },
    spec: { attachRequired: true },
  }, attachments);
  try {
    const name = await attachmentName("vol-1", DRIVER, "n1");
    await assert.rejects(
      volumes.setUp(pod("u1"), request()),
      new RegExp(`has GET error for volume attachment ${name}`),
    );
    attachments.set(name, { metadata: { name }, status: { attached: false } });
    await assert.rejects(
      volumes.setUp(pod("u1"), request()),
      /is not attached yet/,
    );
    assert.deepEqual(client.calls, []);
    attachments.set(name, {
      metadata: { name },
      status: { attached: true, attachmentMetadata: { device: "/dev/x" } },
    });
    await volumes.setUp(pod("u1"), request());
    const stage = client.of("NodeStageVolume")[0] as StageRequest;
    assert.deepEqual(stage.publishContext, { device: "/dev/x" });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a failed unpublish keeps the pod's directory and reports it", async () => {
  const { root, client, volumes } = await fixture(NO_ATTACH);
  try {
    const target = await volumes.setUp(pod("u1"), request());
    client.failures.set("NodeUnpublishVolume", new Error("busy"));
    assert.equal(await volumes.tearDownPod(pod("u1")), false);
    assert.ok(
      (await Deno.stat(target.replace(/mount$/, "vol_data.json"))).isFile,
    );
    assert.deepEqual(client.of("NodeUnstageVolume"), []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
