import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createSimRuntime } from "../runtime/sim/mod.ts";
import { createPodStatusManager } from "../status/mod.ts";
import { createPodSyncer } from "./pod_syncer.ts";
import {
  emptyDirEvictionMessage,
  evictedStatus,
  hasSizeLimitedEmptyDir,
} from "./local_storage_eviction.ts";
import type { Pod } from "./types.ts";

function pod(volumes: NonNullable<Pod["spec"]["volumes"]>): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: {
      volumes,
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: "app",
        image: "busybox:1.36",
        volumeMounts: [{ name: "scratch", mountPath: "/scratch" }],
      }],
    },
  };
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
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock });
  const statusManager = createPodStatusManager();
  const rootDir = await Deno.realPath(await Deno.makeTempDir());
  const events: string[] = [];
  const syncer = createPodSyncer(
    {
      runtime,
      images: runtime,
      clock,
      logger: new CaptureLogger(),
      statusManager,
      mkdir: () => Promise.resolve(),
      events: {
        event: (_ref, type, reason, message) =>
          events.push(`${type} ${reason} ${message}`),
      },
    },
    {
      podLogsDir: "/var/log/pods",
      rootDir,
      serializeImagePulls: true,
      nodeName: "node-a",
      evictionMonitoringPeriodMs: 3_000,
    },
  );
  const signal = new AbortController().signal;
  try {
    const p = pod([{ name: "scratch", emptyDir: { sizeLimit: "1Ki" } }]);
    const first = await syncer.syncPod(
      { pod: p, updateType: "create" },
      signal,
    );
    assert.equal(first.terminal, false);
    assert.equal(first.retryAfterMs, 3_000, "measured again after the period");
    const dir = `${rootDir}/pods/u1/volumes/kubernetes.io~empty-dir/scratch`;
    await Deno.writeFile(`${dir}/fits`, new Uint8Array(1024));
    const second = await syncer.syncPod({ pod: p, updateType: "sync" }, signal);
    assert.equal(second.terminal, false, "exactly the limit is not over it");
    await Deno.writeFile(`${dir}/over`, new Uint8Array(1));
    const third = await syncer.syncPod({ pod: p, updateType: "sync" }, signal);
    assert.equal(third.terminal, true);
    const message =
      'Usage of EmptyDir volume "scratch" exceeds the limit "1Ki". ';
    const evicted = statusManager.getPodStatus("u1");
    assert.equal(evicted?.phase, "Failed");
    assert.equal(evicted?.reason, "Evicted");
    assert.equal(evicted?.message, message);
    assert.deepEqual(events.filter((e) => e.includes("Evicted")), [
      `Warning Evicted ${message}`,
    ]);
    await syncer.syncTerminatingPod({ pod: p, updateType: "sync" }, signal);
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
