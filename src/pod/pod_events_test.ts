import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { RecordedEvents } from "../events/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createSimRuntime } from "../runtime/sim/mod.ts";
import { createPodStatusManager } from "../status/mod.ts";
import {
  createPodSyncer,
  type PodSyncerOptions,
} from "./lifecycle/pod_syncer.ts";
import { containerReference } from "./pod_events.ts";
import type { Pod } from "./types.ts";

function setup(options: Partial<PodSyncerOptions> = {}) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock });
  const events = new RecordedEvents();
  const syncer = createPodSyncer({
    runtime,
    images: runtime,
    clock,
    logger: new CaptureLogger(),
    statusManager: createPodStatusManager(),
    mkdir: () => Promise.resolve(),
    events,
  }, {
    podLogsDir: "/var/log/pods",
    serializeImagePulls: true,
    nodeName: "node-a",
    ...options,
  });
  return { syncer, events, signal: new AbortController().signal };
}

const pod: Pod = {
  metadata: {
    name: "web",
    namespace: "default",
    uid: "u1",
    resourceVersion: "9",
  },
  spec: {
    terminationGracePeriodSeconds: 0,
    containers: [{
      name: "app",
      image: "nginx:1.27",
      imagePullPolicy: "IfNotPresent",
    }],
  },
};

Deno.test("a pod's start records Pulling, Pulled, Created, Started against its container", async () => {
  const { syncer, events, signal } = setup();
  await syncer.syncPod({ pod, updateType: "create" }, signal);
  assert.deepEqual(events.lines().map((l) => l.split(":")[0]), [
    "Pulling",
    "Pulled",
    "Created",
    "Started",
  ]);
  assert.match(
    events.events[1]!.message,
    /^Successfully pulled image "nginx:1\.27" in \S+ \(\S+ including waiting\)\. Image size: \d+ bytes\.$/,
  );
  assert.equal(events.lines()[2], "Created: Created container: app");
  assert.equal(events.lines()[3], "Started: Started container app");
  assert.deepEqual(events.events[3]!.object, {
    kind: "Pod",
    apiVersion: "v1",
    namespace: "default",
    name: "web",
    uid: "u1",
    resourceVersion: "9",
    fieldPath: "spec.containers{app}",
  });
  // The image is present now: a second container start says so.
  await syncer.syncPod({
    pod: { ...pod, metadata: { ...pod.metadata, uid: "u2", name: "web2" } },
    updateType: "create",
  }, signal);
  assert.equal(
    events.lines()[4],
    'Pulled: Container image "nginx:1.27" already present on machine',
  );
});

Deno.test("stopping a pod records Killing with upstream's message", async () => {
  const { syncer, events, signal } = setup();
  await syncer.syncPod({ pod, updateType: "create" }, signal);
  await syncer.syncTerminatingPod(
    { pod, updateType: "kill" },
    signal,
  );
  assert.equal(events.lines().at(-1), "Killing: Stopping container app");
});

Deno.test("a ClusterFirst pod without clusterDNS records MissingClusterDNS on the node and the pod", async () => {
  const { syncer, events } = setup({
    dns: {
      clusterDNS: [],
      host: { servers: ["1.1.1.1"], searches: [], options: [] },
    },
  });
  await syncer.syncPod(
    { pod, updateType: "create" },
    new AbortController().signal,
  );
  const missing = events.events.filter((e) => e.reason === "MissingClusterDNS");
  assert.deepEqual(missing.map((e) => [e.object.kind, e.message]), [
    [
      "Node",
      'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
    ],
    [
      "Pod",
      'pod: "web_default(u1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
    ],
  ]);
});

Deno.test("a volume that cannot be set up records FailedMount on the pod", async () => {
  const rootDir = await Deno.makeTempDir();
  try {
    const { syncer, events, signal } = setup({ rootDir });
    await syncer.syncPod({
      pod: {
        ...pod,
        spec: {
          ...pod.spec,
          volumes: [{ name: "cfg", configMap: { name: "settings" } }],
        },
      },
      updateType: "create",
    }, signal);
    const [failed] = events.events;
    assert.equal(failed?.reason, "FailedMount");
    assert.equal(failed?.type, "Warning");
    assert.equal(failed?.object.fieldPath, undefined);
    assert.match(
      failed?.message ?? "",
      /^MountVolume\.SetUp failed for volume "cfg" : /,
    );
  } finally {
    await Deno.remove(rootDir, { recursive: true });
  }
});

Deno.test("containerReference() names the spec list the container is in, ephemeral ones included", () => {
  const p: Pod = {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: {
      initContainers: [{ name: "init" }],
      containers: [{ name: "app" }],
      ephemeralContainers: [{ name: "debug" }],
    },
  };
  assert.deepEqual(
    ["init", "app", "debug"].map((n) => containerReference(p, n).fieldPath),
    [
      "spec.initContainers{init}",
      "spec.containers{app}",
      "spec.ephemeralContainers{debug}",
    ],
  );
});
