import assert from "node:assert/strict";
import { DeviceManager, socketNotGranted } from "./device_manager.ts";
import { Registration } from "./gen/deviceplugin_pb.ts";
import { CaptureLogger } from "../log/testing.ts";
import { systemClock } from "../clock/mod.ts";
import { createGrpcTransport } from "../runtime/mod.ts";

async function withManager(
  mayConnect: (path: string) => boolean,
  body: (m: DeviceManager) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kts-dm-" });
  const m = new DeviceManager({
    pluginDir: `${dir}/device-plugins`,
    clock: systemClock,
    logger: new CaptureLogger(),
    mayConnect,
  });
  await m.start();
  try {
    await body(m);
  } finally {
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

async function register(m: DeviceManager, endpoint: string): Promise<void> {
  const client = createGrpcTransport({ endpoint: m.socketPath });
  try {
    await client.unary(Registration.method.register, {
      version: "v1beta1",
      endpoint,
      resourceName: "example.com/resource",
    });
  } finally {
    await client.close();
  }
}

Deno.test("Register: a plugin socket the permission lists do not grant is refused, naming the socket and the fix", async () => {
  await withManager(() => false, async (m) => {
    const socket = `${m.pluginDir}/dp.1`;
    await assert.rejects(register(m, "dp.1"), (e: Error) => {
      assert.ok(e.message.includes(socketNotGranted(socket)), e.message);
      return true;
    });
    assert.deepEqual(m.capacity().capacity, {});
  });
});

Deno.test("Register: a plugin that does not answer is refused with upstream's prefix", async () => {
  await withManager(() => true, async (m) => {
    await assert.rejects(
      register(m, "missing.sock"),
      /failed to get device plugin options: /,
    );
    assert.deepEqual(m.capacity().capacity, {});
  });
});

Deno.test("admit: after a restart a pod keeps the devices the checkpoint holds before its plugin registers again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-dm-" });
  const pluginDir = `${dir}/device-plugins`;
  await Deno.mkdir(pluginDir);
  // upstream's checkpoint: pod uid-1, container c, 3 devices of example.com/resource
  await Deno.copyFile(
    new URL("./testdata/upstream_checkpoint", import.meta.url),
    `${pluginDir}/kubelet_internal_checkpoint`,
  );
  const m = new DeviceManager({
    pluginDir,
    clock: systemClock,
    logger: new CaptureLogger(),
  });
  await m.start();
  try {
    const pod = (uid: string) => ({
      metadata: { name: "p", namespace: "d", uid },
      spec: {
        containers: [{
          name: "c",
          resources: { limits: { "example.com/resource": "3" } },
        }],
      },
    });
    assert.deepEqual(m.admit(pod("uid-1"), new Set()), { admit: true });
    assert.deepEqual(
      m.containerDevices("uid-1", "c").get("example.com/resource")?.sort(),
      [
        "Dev-1",
        "Dev-2",
        "Dev-3",
      ],
    );
    // a new pod gets the registered-but-empty resource's refusal
    const other = m.admit(pod("uid-2"), new Set(["uid-1"]));
    assert.equal(other.admit, false);
    assert.match(
      (other as { message: string }).message,
      /no healthy devices present; cannot allocate unhealthy devices example\.com\/resource/,
    );
    // the checkpoint's resources are back with no devices until their plugins register
    assert.deepEqual(m.capacity().allocatable, {
      "a.b/c": 0,
      "example.com/resource": 0,
    });
  } finally {
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
