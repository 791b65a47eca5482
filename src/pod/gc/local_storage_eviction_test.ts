import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createSimRuntime } from "../../runtime/sim/mod.ts";
import { createPodStatusManager } from "../../status/mod.ts";
import { createPodSyncer } from "../lifecycle/pod_syncer.ts";
import {
  emptyDirEvictionMessage,
  evictedStatus,
  hasSizeLimitedEmptyDir,
  localStorageEvictionMessage,
  podEphemeralLimit,
} from "./local_storage_eviction.ts";
import type { Pod } from "../types.ts";
import { directoryUsage } from "../../util/directory_size.ts";

function pod(volumes: NonNullable<Pod["spec"]["volumes"]>): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: {
      volumes,
      terminationGracePeriodSeconds: 30,
      containers: [{
        name: "app",
        image: "busybox:1.36",
        volumeMounts: [{ name: "scratch", mountPath: "/scratch" }],
      }],
    },
  };
}

/** A pod syncer on the simulated runtime, with its status cache and recorded events. */
function syncerFor(options: {
  podLogsDir: string;
  rootDir?: string;
  evictionMonitoringPeriodMs?: number;
}) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock });
  const statusManager = createPodStatusManager();
  const events: string[] = [];
  const logger = new CaptureLogger();
  const syncer = createPodSyncer(
    {
      runtime,
      images: runtime,
      clock,
      logger,
      statusManager,
      mkdir: () => Promise.resolve(),
      events: {
        event: (_ref, type, reason, message) =>
          events.push(`${type} ${reason} ${message}`),
      },
    },
    { ...options, serializeImagePulls: true, nodeName: "node-a" },
  );
  return { runtime, statusManager, syncer, events, logger };
}

Deno.test("emptyDirEvictionMessage() is upstream's text, trailing space included", () => {
  assert.equal(
    emptyDirEvictionMessage("scratch", "1Mi"),
    'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ',
  );
});

Deno.test("hasSizeLimitedEmptyDir() needs an emptyDir with a positive sizeLimit", () => {
  assert.equal(
    hasSizeLimitedEmptyDir(pod([{ name: "a", emptyDir: {} }])),
    false,
  );
  assert.equal(
    hasSizeLimitedEmptyDir(pod([{ name: "a", emptyDir: { sizeLimit: "0" } }])),
    false,
  );
  assert.equal(
    hasSizeLimitedEmptyDir(
      pod([{ name: "a", emptyDir: { sizeLimit: "bad" } }]),
    ),
    false,
  );
  assert.equal(
    hasSizeLimitedEmptyDir(
      pod([{ name: "a", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } }]),
    ),
    true,
  );
});

Deno.test("evictedStatus() fails the pod and keeps the DisruptionTarget transition time", () => {
  const first = evictedStatus(
    { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
    "m",
    undefined,
    "2026-01-01T00:00:00Z",
  );
  assert.equal(first.phase, "Failed");
  assert.equal(first.reason, "Evicted");
  assert.equal(first.message, "m");
  assert.deepEqual(first.conditions, [
    { type: "Ready", status: "True" },
    {
      type: "DisruptionTarget",
      status: "True",
      reason: "TerminationByKubelet",
      message: "m",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    },
  ]);
  const later = evictedStatus(
    { phase: "Failed" },
    "m",
    first,
    "2026-01-01T00:05:00Z",
  );
  assert.equal(
    later.conditions?.[0]?.lastTransitionTime,
    "2026-01-01T00:00:00Z",
  );
});

Deno.test("syncPod() evicts a pod whose emptyDir exceeds its sizeLimit and re-measures on a period", async () => {
  const rootDir = await Deno.realPath(await Deno.makeTempDir());
  const { runtime, statusManager, syncer, events, logger } = syncerFor({
    podLogsDir: "/var/log/pods",
    rootDir,
    evictionMonitoringPeriodMs: 3_000,
  });
  const signal = new AbortController().signal;
  try {
    const roomy = pod([{ name: "scratch", emptyDir: { sizeLimit: "1Gi" } }]);
    const first = await syncer.syncPod(
      { pod: roomy, updateType: "create" },
      signal,
    );
    assert.equal(first.terminal, false);
    assert.equal(first.retryAfterMs, 3_000, "measured again after the period");
    const dir = `${rootDir}/pods/u1/volumes/kubernetes.io~empty-dir/scratch`;
    await Deno.writeFile(`${dir}/fits`, new Uint8Array(1024));
    // usage is counted in allocated blocks, which depend on the filesystem of the temp dir
    const used = (await directoryUsage(dir, { self: true })).bytes;
    assert.ok(used >= 1024, `the file's blocks are counted (${used})`);
    const p = pod([{ name: "scratch", emptyDir: { sizeLimit: `${used}` } }]);
    const second = await syncer.syncPod({ pod: p, updateType: "sync" }, signal);
    assert.equal(second.terminal, false, "exactly the limit is not over it");
    await Deno.writeFile(`${dir}/over`, new Uint8Array(8192).fill(1));
    const third = await syncer.syncPod({ pod: p, updateType: "sync" }, signal);
    assert.equal(third.terminal, true);
    const message =
      `Usage of EmptyDir volume "scratch" exceeds the limit "${used}". `;
    const evicted = statusManager.getPodStatus("u1");
    assert.equal(evicted?.phase, "Failed");
    assert.equal(evicted?.reason, "Evicted");
    assert.equal(evicted?.message, message);
    assert.deepEqual(events.filter((e) => e.includes("Evicted")), [
      `Warning Evicted ${message}`,
    ]);
    await syncer.syncTerminatingPod({ pod: p, updateType: "sync" }, signal);
    // upstream's grace period 0 for an eviction, raised to the runtime minimum, not the pod's 30
    assert.deepEqual(
      logger.records
        .filter((r) => r.msg === "Killing container with a grace period")
        .map((r) => r.fields?.gracePeriod),
      [2],
    );
    assert.ok(
      [...runtime.containers.values()].every((c) => c.state !== "running"),
      "containers stopped",
    );
    await syncer.syncTerminatedPod({ pod: p, updateType: "sync" }, signal);
    const final = statusManager.getPodStatus("u1");
    assert.equal(final?.phase, "Failed");
    assert.equal(final?.reason, "Evicted");
    assert.equal(
      final?.conditions?.find((c) => c.type === "DisruptionTarget")?.status,
      "True",
    );
    assert.equal(events.filter((e) => e.includes("Evicted")).length, 1);
  } finally {
    await Deno.remove(rootDir, { recursive: true });
  }
});

function limited(name: string, limit?: string) {
  return {
    name,
    image: "busybox:1.36",
    ...(limit ? { resources: { limits: { "ephemeral-storage": limit } } } : {}),
  };
}

Deno.test("localStorageEvictionMessage(): emptyDir first, then the pod total, then a container", () => {
  const p: Pod = {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: {
      containers: [limited("a", "1Ki"), limited("b", "1Ki"), limited("c")],
    },
  };
  const containers = new Map([["a", 1000], ["b", 1000], ["c", 48]]);
  const dirs = [
    { volume: "mem", memory: true, bytes: 5000 },
    { volume: "disk", memory: false, sizeLimit: "1k", bytes: 0 },
  ];
  // 2048 bytes in all; the Memory emptyDir is not local storage
  assert.equal(
    localStorageEvictionMessage(p, { emptyDirs: dirs, containers }),
    undefined,
  );
  assert.equal(
    localStorageEvictionMessage(p, {
      emptyDirs: dirs,
      containers: new Map([["a", 1025], ["b", 0]]),
    }),
    'Container a exceeded its local ephemeral storage limit "1Ki". ',
  );
  assert.equal(
    localStorageEvictionMessage(p, {
      emptyDirs: [dirs[0]!, { ...dirs[1]!, bytes: 1 }],
      containers,
    }),
    "Pod ephemeral local storage usage exceeds the total limit of containers 2Ki. ",
  );
  assert.equal(
    localStorageEvictionMessage(p, {
      emptyDirs: [dirs[0]!, { ...dirs[1]!, bytes: 1001 }],
      containers: new Map([["a", 5000]]),
    }),
    'Usage of EmptyDir volume "disk" exceeds the limit "1k". ',
  );
});

Deno.test("podEphemeralLimit(): the containers' sum, an init container's when larger", () => {
  const spec = (
    containers: Pod["spec"]["containers"],
    init?: Pod["spec"]["containers"],
  ) =>
    ({
      metadata: { name: "p" },
      spec: { containers, ...(init ? { initContainers: init } : {}) },
    }) as Pod;
  assert.equal(podEphemeralLimit(spec([limited("a")])), undefined);
  assert.deepEqual(podEphemeralLimit(spec([limited("a", "1Mi")])), {
    value: 1048576,
    text: "1Mi",
  });
  assert.equal(
    podEphemeralLimit(spec([limited("a", "1Mi"), limited("b", "512Ki")]))?.text,
    "1536Ki",
  );
  assert.equal(
    podEphemeralLimit(spec([limited("a", "1Mi")], [limited("i", "3Mi")]))?.text,
    "3Mi",
  );
});

Deno.test("syncPod() evicts a pod whose container writable layer and logs exceed its ephemeral-storage limit", async () => {
  const logsDir = await Deno.realPath(await Deno.makeTempDir());
  const { statusManager, syncer } = syncerFor({ podLogsDir: logsDir });
  const signal = new AbortController().signal;
  try {
    // the simulated runtime reports 4096 bytes of writable layer per container
    const p: Pod = {
      metadata: { name: "web", namespace: "default", uid: "u1" },
      spec: { containers: [limited("app", "5000")] },
    };
    const first = await syncer.syncPod(
      { pod: p, updateType: "create" },
      signal,
    );
    assert.equal(first.terminal, false);
    assert.equal(first.retryAfterMs, 10_000);
    await Deno.mkdir(`${logsDir}/default_web_u1/app`, { recursive: true });
    await Deno.writeFile(
      `${logsDir}/default_web_u1/app/0.log`,
      new Uint8Array(905),
    );
    const second = await syncer.syncPod({ pod: p, updateType: "sync" }, signal);
    assert.equal(second.terminal, true);
    assert.equal(statusManager.getPodStatus("u1")?.reason, "Evicted");
    assert.equal(
      statusManager.getPodStatus("u1")?.message,
      "Pod ephemeral local storage usage exceeds the total limit of containers 5000. ",
    );
  } finally {
    await Deno.remove(logsDir, { recursive: true });
  }
});
