import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createSimRuntime } from "../../runtime/sim/mod.ts";
import { createPodStatusManager } from "../../status/mod.ts";
import { createPodSyncer } from "./pod_syncer.ts";
import type { Pod } from "../types.ts";

async function setup() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock });
  const statusManager = createPodStatusManager();
  const rootDir = await Deno.realPath(await Deno.makeTempDir());
  const syncer = createPodSyncer(
    {
      runtime,
      images: runtime,
      clock,
      logger: new CaptureLogger(),
      statusManager,
      mkdir: () => Promise.resolve(),
    },
    {
      podLogsDir: "/var/log/pods",
      rootDir,
      serializeImagePulls: true,
      nodeName: "node-a",
    },
  );
  return { runtime, statusManager, syncer, rootDir };
}

function pod(spec: Partial<Pod["spec"]>): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: { containers: [], terminationGracePeriodSeconds: 30, ...spec },
  };
}

const signal = new AbortController().signal;

Deno.test("syncPod() mounts volumes into the container's CRI config and tears them down at the end", async () => {
  const { runtime, syncer, rootDir } = await setup();
  try {
    const p = pod({
      volumes: [{ name: "data", emptyDir: {} }],
      containers: [{
        name: "app",
        image: "busybox:1.36",
        volumeMounts: [
          { name: "data", mountPath: "/data" },
          { name: "data", mountPath: "/cfg", subPath: "conf", readOnly: true },
        ],
      }],
    });
    await syncer.syncPod({ pod: p, updateType: "create" }, signal);
    const dir = `${rootDir}/pods/u1/volumes/kubernetes.io~empty-dir/data`;
    const [container] = [...runtime.containers.values()];
    assert.deepEqual(container?.mounts.slice(0, 2), [
      { containerPath: "/data", hostPath: dir, readonly: false },
      { containerPath: "/cfg", hostPath: `${dir}/conf`, readonly: true },
    ]);
    await syncer.syncTerminatingPod({ pod: p, updateType: "kill" }, signal);
    await syncer.syncTerminatedPod({ pod: p, updateType: "kill" }, signal);
    await assert.rejects(Deno.lstat(`${rootDir}/pods/u1/volumes`));
  } finally {
    await Deno.remove(rootDir, { recursive: true });
  }
});

Deno.test("syncPod() keeps a pod with an API-backed volume from starting: FailedMount", async () => {
  const { runtime, statusManager, syncer, rootDir } = await setup();
  try {
    const p = pod({
      volumes: [{ name: "cfg", configMap: { name: "settings" } }],
      containers: [{ name: "app", image: "busybox:1.36" }],
    });
    const out = await syncer.syncPod({ pod: p, updateType: "create" }, signal);
    assert.equal(out.retryAfterMs, 10_000);
    assert.equal(runtime.sandboxes.size, 0);
    const waiting = statusManager.getPodStatus("u1")?.containerStatuses?.[0]
      ?.state.waiting;
    assert.equal(waiting?.reason, "FailedMount");
    assert.match(
      waiting?.message ?? "",
      /^MountVolume\.SetUp failed for volume "cfg" : configMap volumes need objects from the API server/,
    );
  } finally {
    await Deno.remove(rootDir, { recursive: true });
  }
});
