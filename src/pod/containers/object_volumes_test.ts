import assert from "node:assert/strict";
import type { Container, Pod } from "../../api/mod.ts";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import {
  createPodObjectManager,
  createTokenManager,
} from "../../objects/mod.ts";
import { FakeObjectApi } from "../../objects/testing.ts";
import {
  createVolumeManager,
  type CriMount,
  type VolumeManager,
} from "../../volume/mod.ts";
import { withObjectVolumes } from "./object_volumes.ts";

/** Records what the inner manager is given; mounts each volume at its host path. */
class InnerVolumes implements VolumeManager {
  seen: Pod[] = [];
  setUpPod(pod: Pod) {
    this.seen.push(pod);
    return Promise.resolve({ ok: true as const });
  }
  containerMounts(pod: Pod, container: Container): Promise<CriMount[]> {
    const last = this.seen.at(-1) ?? pod;
    return Promise.resolve((container.volumeMounts ?? []).map((m) => {
      const v = last.spec.volumes?.find((v) => v.name === m.name);
      return {
        containerPath: m.mountPath,
        hostPath: (v?.hostPath as { path: string } | undefined)?.path ?? "",
        readonly: false,
        propagation: 0,
      };
    }));
  }
  tearDownPod() {
    return Promise.resolve();
  }
}

Deno.test("object volumes are written atomically and handed over as read-only directories", async () => {
  const root = await Deno.makeTempDir({ prefix: "h8-objvol-" });
  try {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const api = new FakeObjectApi();
    api.now = () => clock.now();
    api.put("configmaps", {
      metadata: { name: "cfg", namespace: "ns" },
      data: { "app.conf": "v1" },
    });
    const logger = new CaptureLogger();
    const inner = new InnerVolumes();
    const volumes = withObjectVolumes(inner, {
      objects: createPodObjectManager({ api, clock, logger }, {
        strategy: "Get",
      }),
      tokens: createTokenManager({ api, clock, logger }),
    }, { rootDir: root });
    const container: Container = {
      name: "c",
      volumeMounts: [
        { name: "cfg", mountPath: "/etc/cfg" },
        { name: "scratch", mountPath: "/tmp" },
      ],
    };
    const pod: Pod = {
      metadata: { name: "p", namespace: "ns", uid: "u1" },
      spec: {
        containers: [container],
        volumes: [
          { name: "cfg", configMap: { name: "cfg" } },
          { name: "scratch", emptyDir: {} },
        ],
      },
    };
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    const dir = `${root}/pods/u1/volumes/kubernetes.io~configmap/cfg`;
    assert.equal(await Deno.readTextFile(`${dir}/app.conf`), "v1");
    assert.deepEqual(inner.seen[0]!.spec.volumes, [
      { name: "cfg", hostPath: { path: dir, type: "Directory" } },
      { name: "scratch", emptyDir: {} },
    ]);
    const mounts = await volumes.containerMounts(pod, container, {
      expand: (s) => s,
      running: new Set(),
    });
    assert.deepEqual(mounts.map((m) => [m.containerPath, m.readonly]), [
      ["/etc/cfg", true],
      ["/tmp", false],
    ]);

    api.put("configmaps", {
      metadata: { name: "cfg", namespace: "ns" },
      data: { "app.conf": "v2" },
    });
    await volumes.setUpPod(pod);
    assert.equal(await Deno.readTextFile(`${dir}/app.conf`), "v2");

    const broken: Pod = {
      ...pod,
      spec: {
        ...pod.spec,
        volumes: [{ name: "gone", secret: { secretName: "gone" } }],
      },
    };
    assert.deepEqual(await volumes.setUpPod(broken), {
      ok: false,
      reason: "FailedMount",
      message:
        'MountVolume.SetUp failed for volume "gone" : secret "gone" not found',
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("object volumes are handed to the pod's fsGroup (group read added, as upstream)", async () => {
  const root = await Deno.makeTempDir({ prefix: "h13-objvol-" });
  try {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const api = new FakeObjectApi();
    api.now = () => clock.now();
    api.put("secrets", {
      metadata: { name: "s", namespace: "ns" },
      data: { "data-1": btoa("value-1") },
    });
    const logger = new CaptureLogger();
    const volumes = withObjectVolumes(new InnerVolumes(), {
      objects: createPodObjectManager({ api, clock, logger }, {
        strategy: "Get",
      }),
      tokens: createTokenManager({ api, clock, logger }),
    }, { rootDir: root });
    // a group this process holds, so the test needs no root
    const fsGroup = (await Deno.stat(root)).gid!;
    const pod: Pod = {
      metadata: { name: "p", namespace: "ns", uid: "u1" },
      spec: {
        securityContext: { fsGroup },
        containers: [{ name: "c" }],
        volumes: [{
          name: "sec",
          projected: {
            defaultMode: 0o400,
            sources: [{ secret: { name: "s" } }],
          },
        }],
      },
    };
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    const file = `${root}/pods/u1/volumes/kubernetes.io~projected/sec/data-1`;
    assert.equal(await Deno.readTextFile(file), "value-1");
    const info = await Deno.stat(file);
    assert.equal((info.mode ?? 0) & 0o777, 0o440);
    assert.equal(info.gid, fsGroup);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a configMap subPath starts beside a running container that mounts the whole volume (object volumes are never writable)", async () => {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "objvol-subpath-" }),
  );
  try {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const api = new FakeObjectApi();
    api.now = () => clock.now();
    api.put("configmaps", {
      metadata: { name: "cfg", namespace: "ns" },
      data: { "app.conf": "v1" },
    });
    const logger = new CaptureLogger();
    const volumes = withObjectVolumes(
      createVolumeManager({ logger }, { rootDir: root }),
      {
        objects: createPodObjectManager({ api, clock, logger }, {
          strategy: "Get",
        }),
        tokens: createTokenManager({ api, clock, logger }),
      },
      { rootDir: root },
    );
    const sub: Container = {
      name: "sub",
      volumeMounts: [{ name: "cfg", mountPath: "/conf", subPath: "app.conf" }],
    };
    const whole: Container = {
      name: "whole",
      volumeMounts: [{ name: "cfg", mountPath: "/cfg" }],
    };
    const pod: Pod = {
      metadata: { name: "p", namespace: "ns", uid: "u2" },
      spec: {
        containers: [sub, whole],
        volumes: [{ name: "cfg", configMap: { name: "cfg" } }],
      },
    };
    assert.deepEqual(await volumes.setUpPod(pod), { ok: true });
    const mounts = await volumes.containerMounts(pod, sub, {
      expand: (s) => s,
      running: new Set(["whole"]),
    });
    assert.deepEqual(mounts.map((m) => [m.containerPath, m.readonly]), [
      ["/conf", true],
    ]);
    assert.match(mounts[0]!.hostPath, /kubernetes\.io~configmap\/cfg\//);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
