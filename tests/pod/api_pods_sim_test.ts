/**
 * API server mode end to end on the simulated runtime and the in-memory pod API: a pod bound
 * to the node runs and its status reaches the API, a graceful deletion stops it and deletes
 * the object (grace 0, UID precondition), a pod that does not fit is Failed/OutOfcpu, and a
 * dropped watch loses no pod.
 */
import assert from "node:assert/strict";
import type { Node, Pod } from "../../src/api/mod.ts";
import { FakePodApi } from "../../src/api/testing.ts";
import { FakeClock } from "../../src/clock/testing.ts";
import { createKubelet } from "../../src/kubelet/create_kubelet.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import {
  createPodSyncer,
  createProbeResults,
  createSysctlAllowlist,
  RuntimeStatusCache,
  sysctlAdmission,
} from "../../src/pod/mod.ts";
import { createSimRuntime } from "../../src/runtime/sim/mod.ts";
import { createPodStatusManager } from "../../src/status/mod.ts";

const NODE = "node1";

const node: Node = {
  metadata: { name: NODE, uid: "node-uid", labels: {} },
  status: { allocatable: { cpu: "2", memory: "4Gi", pods: "110" } },
};

function apiPod(name: string, cpu = "100m"): Pod {
  return {
    metadata: { name, namespace: "default" },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 30,
      containers: [{
        name: "c",
        image: "busybox",
        resources: { requests: { cpu } },
      }],
    },
  };
}

async function setup() {
  const clock = new FakeClock();
  const runtime = createSimRuntime({ clock, scenario: {} });
  const logger = new CaptureLogger();
  const api = new FakePodApi();
  const statuses = createPodStatusManager();
  const probes = createProbeResults();
  const dir = await Deno.makeTempDir({ prefix: "kts-api-sim-" });
  // shared by the syncer and the PLEG's events, as run_kubelet wires them
  const runtimeCache = new RuntimeStatusCache();
  const syncer = createPodSyncer({
    runtime,
    images: runtime,
    runtimeCache,
    clock,
    logger,
    statusManager: statuses,
    probes,
  }, { podLogsDir: `${dir}/logs`, serializeImagePulls: true, nodeName: NODE });
  const kubelet = createKubelet({
    runtime,
    syncer,
    runtimeCache,
    clock,
    logger,
    probes: { runtime, statuses, results: probes },
    statuses,
    admission: sysctlAdmission(createSysctlAllowlist([]), statuses),
    cluster: { pods: api, statuses, node: () => node },
  }, { nodeName: NODE, random: () => 0 });
  kubelet.start();
  /** Moves fake time in 1 s steps until `ok()` holds. */
  const until = async (what: string, ok: () => boolean, maxMs = 60_000) => {
    for (let t = 0; t <= maxMs && !ok(); t += 1000) {
      for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
      await kubelet.whenIdle();
      if (ok()) break;
      await clock.advance(1000);
    }
    assert.ok(ok(), `timed out waiting for ${what}`);
  };
  return {
    api,
    clock,
    runtime,
    kubelet,
    until,
    async [Symbol.asyncDispose]() {
      await kubelet.stop();
      await runtime.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test("API pods run, report status, are deleted after a graceful stop, and are refused when they do not fit", async () => {
  await using t = await setup();
  const { api, until } = t;
  const web = api.put(apiPod("web"));
  await until(
    "web Running in the API",
    () => api.pods.get("default/web")?.status?.phase === "Running",
  );
  const status = api.pods.get("default/web")!.status!;
  assert.equal(status.containerStatuses?.[0]?.name, "c");
  assert.ok(status.containerStatuses?.[0]?.state.running);

  await api.deletePod("default", "web", {
    gracePeriodSeconds: 5,
    uid: web.metadata.uid!,
  });
  await until("web deleted", () => !api.pods.has("default/web"));
  const del = api.calls.filter((c) => c.method === "deletePod").at(-1)!;
  assert.deepEqual(del.body, { gracePeriodSeconds: 0, uid: web.metadata.uid });

  api.put(apiPod("huge", "64"));
  await until(
    "huge rejected",
    () => api.pods.get("default/huge")?.status?.phase === "Failed",
  );
  const huge = api.pods.get("default/huge")!.status!;
  assert.equal(huge.reason, "OutOfcpu");
  assert.equal(
    huge.message,
    "Pod was rejected: Node didn't have enough resource: cpu, requested: 64000, used: 0, capacity: 2000",
  );
});

Deno.test("a dropped watch loses no pod: the one created meanwhile runs", async () => {
  await using t = await setup();
  const { api, until } = t;
  api.put(apiPod("a"));
  await until(
    "a Running",
    () => api.pods.get("default/a")?.status?.phase === "Running",
  );
  api.disconnectWatches();
  api.put(apiPod("b"));
  await until(
    "b Running",
    () => api.pods.get("default/b")?.status?.phase === "Running",
  );
  assert.equal(api.calls.filter((c) => c.method === "listPods").length, 1);
});

Deno.test("a container that exits on its own is seen (the PLEG voids the kept runtime state) and restarted", async () => {
  await using t = await setup();
  const { api, clock, runtime, until } = t;
  api.put(apiPod("crash"));
  await until(
    "crash Running",
    () => api.pods.get("default/crash")?.status?.phase === "Running",
  );
  const first = [...runtime.containers.values()][0]!;
  first.exitAt = clock.now();
  first.plannedExitCode = 2;
  await until(
    "the exit reported and the container restarted",
    () =>
      api.pods.get("default/crash")?.status?.containerStatuses?.[0]
        ?.lastState?.terminated?.exitCode === 2,
  );
  assert.ok(
    [...runtime.containers.values()].some((c) =>
      c.metadata.attempt === 1 && c.state === "running"
    ),
  );
});
