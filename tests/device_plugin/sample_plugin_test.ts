/**
 * The device manager against upstream's sample device plugin
 * (test/images/sample-device-plugin, built by `bash scripts/peers.sh
 * sample-device-plugin`), a real grpc-go plugin run as a host process: it
 * registers over our `node:http2` Registration server, streams two devices,
 * answers `Allocate` with a mount of `/tmp/<device>`, and its socket goes
 * away when it stops.
 *
 * The plugin always registers at `/var/lib/kubelet/device-plugins/kubelet.sock`:
 * it runs in a private mount namespace where that folder is the test's own
 * plugin folder, so the host's stays untouched. Needs root (unshare, mount).
 */
import assert from "node:assert/strict";
import { DeviceManager } from "../../src/device_plugin/mod.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { systemClock } from "../../src/clock/mod.ts";
import type { Pod } from "../../src/api/mod.ts";
import { createGrpcTransport } from "../../src/runtime/mod.ts";
import { Registration } from "../../src/device_plugin/gen/deviceplugin_pb.ts";
import { peersOutput } from "../_peers.ts";

const RESOURCE = "example.com/resource";
const HOST_FOLDER = "/var/lib/kubelet/device-plugins";

const binary = Deno.uid() === 0
  ? await peersOutput("sample-device-plugin")
  : undefined;
if (!binary) {
  // deno-lint-ignore no-console
  console.warn(
    "tests/device_plugin/sample_plugin_test.ts skipped: needs root and bash scripts/peers.sh sample-device-plugin",
  );
}

function pod(uid: string, count: number): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: "default", uid },
    spec: {
      containers: [{
        name: "c",
        image: "busybox",
        resources: { limits: { [RESOURCE]: String(count) } },
      }],
    },
  } as Pod;
}

async function until<T>(
  what: string,
  probe: () => T | undefined,
  ms = 30_000,
): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

Deno.test({
  name:
    "device manager: upstream's sample plugin registers, allocates, and goes away",
  ignore: !binary,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-devplugin-" });
  const logger = new CaptureLogger();
  const manager = new DeviceManager({
    pluginDir: dir,
    clock: systemClock,
    logger,
  });
  await manager.start();
  const child = new Deno.Command("unshare", {
    args: [
      "-m",
      "--propagation",
      "private",
      "sh",
      "-c",
      `mkdir -p ${HOST_FOLDER} && mount --bind "$1" ${HOST_FOLDER} && exec "$2"`,
      "sh",
      dir,
      binary!,
    ],
    env: { PLUGIN_SOCK_DIR: HOST_FOLDER },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    // registration through grpc-go, then the ListAndWatch stream
    const cap = await until("two devices", () => {
      const c = manager.capacity();
      return c.allocatable[RESOURCE] === 2 ? c : undefined;
    });
    assert.deepEqual(cap.capacity, { [RESOURCE]: 2 });

    // a regular init container's device is handed on to the app container (one device
    // held), a sidecar's is not (two held): the second pod fits only beside the first
    const withInit = (uid: string, restartPolicy?: "Always"): Pod => {
      const p = pod(uid, 1);
      p.spec.initContainers = [{
        name: "init",
        image: "busybox",
        ...(restartPolicy ? { restartPolicy } : {}),
        resources: { limits: { [RESOURCE]: "1" } },
      }];
      return p;
    };
    assert.deepEqual(manager.admit(withInit("i1"), new Set()), { admit: true });
    assert.deepEqual(manager.admit(pod("i2", 1), new Set(["i1"])), {
      admit: true,
    });
    assert.deepEqual(manager.admit(withInit("s1", "Always"), new Set()), {
      admit: true,
    });
    assert.equal(manager.admit(pod("s2", 1), new Set(["s1"])).admit, false);

    assert.deepEqual(manager.admit(pod("u1", 1), new Set()), { admit: true });
    const options = await manager.containerOptions(
      pod("u1", 1),
      pod("u1", 1).spec.containers[0]!,
    );
    const [device] = manager.containerDevices("u1", "c").get(RESOURCE)!;
    assert.deepEqual(options?.mounts, [{
      containerPath: `/tmp/${device}`,
      hostPath: `/tmp/${device}`,
      readonly: false,
    }]);

    // one device left: asking for two is upstream's refusal
    assert.deepEqual(manager.admit(pod("u2", 2), new Set(["u1"])), {
      admit: false,
      reason: "UnexpectedAdmissionError",
      message:
        `Allocate failed due to requested number of devices unavailable for ${RESOURCE}. Requested: 2, Available: 1, which is unexpected`,
    });
    // u1 gone from the active pods: its device is free again
    assert.deepEqual(manager.admit(pod("u3", 2), new Set()), { admit: true });

    // a registration with a version we do not speak gets upstream's text
    const client = createGrpcTransport({ endpoint: manager.socketPath });
    await assert.rejects(
      client.unary(Registration.method.register, {
        version: "v1alpha1",
        endpoint: "x.sock",
        resourceName: RESOURCE,
      }),
      /requested API version "v1alpha1" is not supported by kubelet\. Supported version is \["v1beta1"\]/,
    );
    await client.close();

    // the plugin stops: its devices turn unhealthy, capacity stays for the grace period
    child.kill("SIGTERM");
    await child.status;
    const after = await until("the plugin gone", () => {
      const c = manager.capacity();
      return c.allocatable[RESOURCE] === 0 ? c : undefined;
    });
    assert.deepEqual(after.capacity, { [RESOURCE]: 2 });
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await child.stderr.cancel().catch(() => {});
    await manager.stop();
  }
  // the checkpoint holds u3's two devices and reads back
  const restarted = new DeviceManager({
    pluginDir: dir,
    clock: systemClock,
    logger,
  });
  await restarted.start();
  try {
    assert.equal(
      restarted.containerDevices("u3", "c").get(RESOURCE)?.length,
      2,
    );
    assert.deepEqual(restarted.capacity().allocatable, { [RESOURCE]: 0 });
  } finally {
    await restarted.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
