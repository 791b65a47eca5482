import assert from "node:assert/strict";
import { ApiConflictError, ApiStatusError, type Pod } from "../api/mod.ts";
import { FakePodApi } from "../api/testing.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { podStatusPatch } from "./pod_status_patch.ts";
import { createPodStatusManager } from "./pod_status_manager.ts";
import { PodStatusSync } from "./pod_status_sync.ts";

function setup(source = "api") {
  const api = new FakePodApi();
  const stored = api.put({
    metadata: { name: "web", namespace: "ns" },
    spec: { nodeName: "n1", containers: [{ name: "c", image: "busybox" }] },
    status: {
      phase: "Pending",
      qosClass: "BestEffort",
      conditions: [{ type: "PodScheduled", status: "True" }],
    },
  });
  const pod: Pod = {
    ...stored,
    metadata: {
      ...stored.metadata,
      annotations: { "kubernetes.io/config.source": source },
    },
  };
  const config = { pods: [pod] };
  const terminated = new Set<string>();
  const statuses = createPodStatusManager();
  const clock = new FakeClock();
  const sync = new PodStatusSync({
    api,
    statuses,
    clock,
    logger: new CaptureLogger(),
    pods: () => config.pods,
    podTerminated: (uid) => terminated.has(uid),
  });
  return { api, pod, config, terminated, statuses, sync, clock };
}

const patches = (api: FakePodApi) =>
  api.calls.filter((c) => c.method === "patchPodStatus");

Deno.test("podStatusPatch() carries the UID, only changed fields, and never clears API-owned ones", () => {
  assert.equal(
    podStatusPatch("u", { phase: "Running" }, { phase: "Running" }),
    undefined,
  );
  assert.deepEqual(
    podStatusPatch("u", {
      phase: "Pending",
      qosClass: "BestEffort",
      reason: "OutOfcpu",
      conditions: [{ type: "PodScheduled", status: "True" }],
    }, {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True" }],
    }),
    {
      metadata: { uid: "u" },
      status: {
        phase: "Running",
        reason: null,
        conditions: [{ type: "Ready", status: "True" }],
      },
    },
  );
});

Deno.test("podStatusPatch() removes a condition's reason and message once it no longer has them", () => {
  assert.deepEqual(
    podStatusPatch("u", {
      conditions: [{
        type: "Ready",
        status: "False",
        reason: "ContainersNotReady",
        message: "containers with unready status: [c]",
      }],
    }, { conditions: [{ type: "Ready", status: "True" }] }),
    {
      metadata: { uid: "u" },
      status: {
        conditions: [{
          type: "Ready",
          status: "True",
          reason: null,
          message: null,
        }],
      },
    },
  );
});

Deno.test("podStatusPatch() ignores what the API server omits (empty strings, lists, objects)", () => {
  const stored = {
    name: "c",
    image: "i",
    imageID: "",
    ready: true,
    restartCount: 0,
    state: { running: { startedAt: "2026-01-01T00:00:00Z" } },
    lastState: {},
  };
  assert.equal(
    podStatusPatch("u", { phase: "Running", containerStatuses: [stored] }, {
      phase: "Running",
      message: "",
      podIPs: [],
      containerStatuses: [{ ...stored, containerID: "" }],
    }),
    undefined,
  );
});

Deno.test("PodStatusSync patches an API pod's status only when it changed, keeping other conditions", async () => {
  const { api, pod, statuses, sync } = setup();
  statuses.setPodStatus(pod, {
    phase: "Running",
    podIP: "10.0.0.5",
    conditions: [{ type: "Ready", status: "True" }],
  });
  await sync.syncBatch(false);
  await sync.syncBatch(true); // nothing changed: no second patch
  assert.equal(patches(api).length, 1);
  const stored = api.pods.get("ns/web")!;
  assert.equal(stored.status?.phase, "Running");
  assert.equal(stored.status?.podIP, "10.0.0.5");
  assert.equal(stored.status?.qosClass, "BestEffort");
  assert.deepEqual(stored.status?.conditions?.map((c) => c.type), [
    "PodScheduled",
    "Ready",
  ]);
  assert.deepEqual(
    (patches(api)[0]!.body as { metadata: unknown }).metadata,
    { uid: pod.metadata.uid },
  );
});

Deno.test("PodStatusSync retries a 409 with a fresh GET and keeps failed writes for the next pass", async () => {
  const { api, pod, statuses, sync, terminated } = setup();
  terminated.add(pod.metadata.uid!);
  api.injectError(
    "patchPodStatus",
    new ApiConflictError("conflict", { code: 409, reason: "Conflict" }),
  );
  api.injectError(
    "patchPodStatus",
    new ApiConflictError("conflict", { code: 409, reason: "Conflict" }),
  );
  statuses.setPodStatus(pod, { phase: "Running" });
  await sync.syncBatch(false);
  assert.equal(patches(api).length, 3);
  assert.equal(api.calls.filter((c) => c.method === "getPod").length, 3);
  assert.equal(api.pods.get("ns/web")!.status?.phase, "Running");

  // A server error: the latest status is written by the next full pass.
  api.injectError("patchPodStatus", new ApiStatusError("boom", { code: 500 }));
  statuses.setPodStatus(pod, { phase: "Succeeded" });
  await sync.syncBatch(false);
  assert.equal(api.pods.get("ns/web")!.status?.phase, "Running");
  await sync.syncBatch(true);
  assert.equal(api.pods.get("ns/web")!.status?.phase, "Succeeded");
});

Deno.test("PodStatusSync survives a burst of 409s longer than its retries: the latest status wins, nothing is lost", async () => {
  const { api, pod, statuses, sync } = setup();
  const conflict = () =>
    new ApiConflictError("conflict", { code: 409, reason: "Conflict" });
  for (let i = 0; i < 10; i++) api.injectError("patchPodStatus", conflict());
  // each pass tries 1 + 3 times; the first two passes meet only conflicts
  statuses.setPodStatus(pod, { phase: "Running" });
  await sync.syncBatch(false);
  statuses.setPodStatus(pod, { phase: "Running", podIP: "10.0.0.7" });
  await sync.syncBatch(false);
  assert.equal(patches(api).length, 8);
  assert.equal(api.pods.get("ns/web")!.status?.phase, "Pending");
  statuses.setPodStatus(pod, {
    phase: "Running",
    podIP: "10.0.0.7",
    conditions: [{ type: "Ready", status: "True" }],
  });
  await sync.syncBatch(false);
  assert.equal(patches(api).length, 11);
  const stored = api.pods.get("ns/web")!.status!;
  assert.equal(stored.phase, "Running");
  assert.equal(stored.podIP, "10.0.0.7");
  assert.deepEqual(
    stored.conditions?.map((c) => `${c.type}=${c.status}`),
    ["PodScheduled=True", "Ready=True"],
  );
  // written once and for all: the full pass finds nothing left to send
  await sync.syncBatch(true);
  assert.equal(patches(api).length, 11);
});

Deno.test("PodStatusSync holds a terminal phase back while the pod's containers may still run", async () => {
  const { api, pod, statuses, sync, terminated } = setup();
  statuses.setPodStatus(pod, { phase: "Running" });
  await sync.syncBatch(false);
  statuses.setPodStatus(pod, {
    phase: "Failed",
    reason: "DeadlineExceeded",
    message: "Pod was active on the node longer than the specified deadline",
    conditions: [{ type: "Ready", status: "False" }],
  });
  await sync.syncBatch(false);
  const held = api.pods.get("ns/web")!.status!;
  assert.deepEqual([held.phase, held.reason], ["Running", undefined]);
  assert.equal(
    held.conditions?.find((c) => c.type === "Ready")?.status,
    "False",
  );
  // the worker stopped the containers: the next pass writes the phase
  terminated.add(pod.metadata.uid!);
  await sync.syncBatch(true);
  const done = api.pods.get("ns/web")!.status!;
  assert.deepEqual([done.phase, done.reason], ["Failed", "DeadlineExceeded"]);
});

Deno.test("PodStatusSync sends the kubelet's DisruptionTarget only with the terminal phase, stamped when sent", async () => {
  const { api, pod, statuses, sync, terminated, clock } = setup();
  statuses.setPodStatus(pod, { phase: "Running" });
  await sync.syncBatch(false);
  const target = {
    type: "DisruptionTarget",
    status: "True" as const,
    reason: "TerminationByKubelet",
    message: "shutdown",
    lastTransitionTime: "2020-01-01T00:00:00Z",
  };
  statuses.setPodStatus(pod, {
    phase: "Failed",
    reason: "Terminated",
    conditions: [{ type: "Ready", status: "False" }, target],
  });
  await sync.syncBatch(false);
  const held = api.pods.get("ns/web")!.status!;
  assert.equal(held.phase, "Running");
  assert.equal(
    held.conditions?.find((c) => c.type === "DisruptionTarget"),
    undefined,
  );
  await clock.advance(5_000);
  terminated.add(pod.metadata.uid!);
  await sync.syncBatch(true);
  const done = api.pods.get("ns/web")!.status!;
  const sent = done.conditions?.find((c) => c.type === "DisruptionTarget");
  assert.deepEqual([done.phase, sent?.status, sent?.lastTransitionTime], [
    "Failed",
    "True",
    new Date(clock.now()).toISOString().replace(/\.\d+Z$/, "Z"),
  ]);
});

Deno.test("PodStatusSync skips a pod recreated under the same name", async () => {
  const { api, pod, statuses, sync } = setup();
  api.remove("ns", "web");
  api.put({ metadata: { name: "web", namespace: "ns" }, spec: pod.spec });
  statuses.setPodStatus(pod, { phase: "Running" });
  await sync.syncBatch(false);
  assert.equal(patches(api).length, 0);
});

Deno.test("PodStatusSync deletes a terminated pod with grace 0 and its UID as precondition", async () => {
  const { api, pod, config, terminated, statuses, sync } = setup();
  await api.deletePod("ns", "web", {
    gracePeriodSeconds: 5,
    uid: pod.metadata.uid!,
  });
  const deleting: Pod = {
    ...pod,
    metadata: { ...pod.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
  };
  config.pods = [deleting];
  statuses.setPodStatus(deleting, { phase: "Running" });
  await sync.syncBatch(false);
  assert.ok(api.pods.has("ns/web"), "containers may still run: kept");
  terminated.add(pod.metadata.uid!);
  statuses.setPodStatus(deleting, { phase: "Failed" });
  await sync.syncBatch(false);
  assert.ok(!api.pods.has("ns/web"));
  const del = api.calls.filter((c) => c.method === "deletePod").at(-1)!;
  assert.deepEqual(del.body, { gracePeriodSeconds: 0, uid: pod.metadata.uid });
});

Deno.test("PodStatusSync never deletes a pod before its newest status, one that came while the pass wrote another pod's", async () => {
  const { api, pod, config, terminated, statuses, sync } = setup();
  const otherStored = api.put({
    metadata: { name: "first", namespace: "ns" },
    spec: { nodeName: "n1", containers: [{ name: "c", image: "busybox" }] },
    status: { phase: "Pending" },
  });
  const other: Pod = {
    ...otherStored,
    metadata: {
      ...otherStored.metadata,
      annotations: { "kubernetes.io/config.source": "api" },
    },
  };
  const deleting: Pod = {
    ...pod,
    metadata: { ...pod.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
  };
  // the pass takes "first" before "web"
  config.pods = [other, deleting];
  statuses.setPodStatus(other, { phase: "Pending" });
  statuses.setPodStatus(deleting, { phase: "Running" });
  await sync.syncBatch(false);
  assert.equal(api.pods.get("ns/web")?.status?.phase, "Running");
  // While the next pass writes "first", web's containers stop and its Failed status arrives.
  statuses.setPodStatus(other, { phase: "Running" });
  const getPod = api.getPod.bind(api);
  api.getPod = (namespace: string, name: string) => {
    if (name === "first" && !terminated.has(pod.metadata.uid!)) {
      terminated.add(pod.metadata.uid!);
      statuses.setPodStatus(deleting, { phase: "Failed" });
    }
    return getPod(namespace, name);
  };
  await sync.syncBatch(true);
  assert.equal(
    api.pods.get("ns/web")?.status?.phase,
    "Running",
    "not deleted on the stale status",
  );
  const deletes = () => api.calls.filter((c) => c.method === "deletePod");
  assert.equal(deletes().length, 0);
  // the next pass writes Failed, then deletes
  await sync.syncBatch(false);
  const written = patches(api).map((c) =>
    (c.body as { status: { phase?: string } }).status.phase
  );
  assert.ok(written.includes("Failed"), `patches: ${JSON.stringify(written)}`);
  assert.equal(deletes().length, 1);
  assert.ok(!api.pods.has("ns/web"));
});

Deno.test("PodStatusSync does not delete a new pod that took the name", async () => {
  const { api, pod, config, terminated, statuses, sync } = setup();
  const deleting: Pod = {
    ...pod,
    metadata: { ...pod.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
  };
  config.pods = [deleting];
  terminated.add(pod.metadata.uid!);
  statuses.setPodStatus(deleting, { phase: "Failed" });
  api.remove("ns", "web");
  const fresh = api.put({
    metadata: { name: "web", namespace: "ns" },
    spec: pod.spec,
  });
  await sync.syncBatch(false);
  assert.equal(api.pods.get("ns/web")?.metadata.uid, fresh.metadata.uid);
});

Deno.test("PodStatusSync writes a static pod's status to its mirror pod and never deletes it", async () => {
  const api = new FakePodApi();
  const mirror = api.put({
    metadata: { name: "etcd-n1", namespace: "kube-system" },
    spec: { nodeName: "n1", containers: [] },
  });
  const statics: Pod = {
    metadata: {
      name: "etcd-n1",
      namespace: "kube-system",
      uid: "static-uid",
      deletionTimestamp: "2026-01-01T00:00:00Z",
      annotations: { "kubernetes.io/config.source": "file" },
    },
    spec: { containers: [] },
  };
  const statuses = createPodStatusManager();
  const sync = new PodStatusSync({
    api,
    statuses,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    pods: () => [statics],
    podTerminated: () => true,
    mirrorPodOf: () => ({
      namespace: "kube-system",
      name: "etcd-n1",
      uid: mirror.metadata.uid!,
    }),
  });
  statuses.setPodStatus(statics, { phase: "Running" });
  await sync.syncBatch(false);
  assert.equal(api.pods.get("kube-system/etcd-n1")?.status?.phase, "Running");
  assert.equal(api.calls.filter((c) => c.method === "deletePod").length, 0);
});

Deno.test("PodStatusSync.run() writes on change without waiting for the period", async () => {
  const { api, pod, statuses, sync } = setup();
  const stop = new AbortController();
  const running = sync.run(stop.signal);
  statuses.setPodStatus(pod, { phase: "Running" });
  for (let i = 0; i < 100 && patches(api).length === 0; i++) {
    await new Promise((r) => setTimeout(r, 1));
  }
  assert.equal(api.pods.get("ns/web")!.status?.phase, "Running");
  stop.abort();
  await running;
});

Deno.test("PodStatusSync deletes a deleted API pod that never got a status on the full pass", async () => {
  const { api, pod, config, terminated, sync } = setup();
  config.pods = [{
    ...pod,
    metadata: { ...pod.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
  }];
  await sync.syncBatch(false);
  assert.ok(api.pods.has("ns/web"));
  terminated.add(pod.metadata.uid!);
  await sync.syncBatch(true);
  assert.ok(!api.pods.has("ns/web"));
  assert.equal(patches(api).length, 0);
});

Deno.test("PodStatusSync's full pass rewrites an API status someone else changed", async () => {
  const { api, pod, config, statuses, sync } = setup();
  statuses.setPodStatus(pod, { phase: "Running" });
  await sync.syncBatch(false);
  assert.equal(patches(api).length, 1);
  // the watched copy agrees: the full pass sends nothing
  config.pods = [{ ...pod, status: api.pods.get("ns/web")!.status! }];
  await sync.syncBatch(true);
  assert.equal(patches(api).length, 1);
  // another client set phase Pending: the full pass puts Running back
  const tampered = api.put({
    ...api.pods.get("ns/web")!,
    status: { ...api.pods.get("ns/web")!.status, phase: "Pending" },
  });
  config.pods = [{ ...pod, status: tampered.status! }];
  await sync.syncBatch(true);
  assert.equal(patches(api).length, 2);
  assert.equal(api.pods.get("ns/web")!.status?.phase, "Running");
});

Deno.test("podStatusPatch() deletes a resize condition the kubelet dropped, and leaves others' conditions alone", () => {
  const inProgress = {
    type: "PodResizeInProgress",
    status: "True" as const,
    lastTransitionTime: "2026-01-01T00:00:00Z",
  };
  const scheduled = { type: "PodScheduled", status: "True" as const };
  const patch = podStatusPatch("u1", {
    phase: "Running",
    conditions: [inProgress, scheduled],
  }, { phase: "Running", conditions: [] });
  assert.deepEqual(patch?.status.conditions, [{
    type: "PodResizeInProgress",
    $patch: "delete",
  }]);
  assert.equal(
    podStatusPatch("u1", { phase: "Running", conditions: [scheduled] }, {
      phase: "Running",
      conditions: [],
    }),
    undefined,
  );
});

Deno.test("podStatusPatch() deletes a pod IP that is gone and orders the new list, as a two-way merge patch", () => {
  assert.deepEqual(
    podStatusPatch("u", {
      podIP: "10.1.0.5",
      podIPs: [{ ip: "10.1.0.5" }],
    }, {
      podIP: "10.1.0.9",
      podIPs: [{ ip: "10.1.0.9" }],
    }),
    {
      metadata: { uid: "u" },
      status: {
        podIP: "10.1.0.9",
        podIPs: [{ ip: "10.1.0.9" }, { ip: "10.1.0.5", $patch: "delete" }],
        "$setElementOrder/podIPs": [{ ip: "10.1.0.9" }],
      },
    },
  );
  // first report: nothing to delete, the list as is
  assert.deepEqual(
    podStatusPatch("u", {}, { podIPs: [{ ip: "10.1.0.9" }] })?.status,
    { podIPs: [{ ip: "10.1.0.9" }] },
  );
});

Deno.test("PodStatusSync writes a static pod's unchanged status again to a recreated mirror pod", async () => {
  const api = new FakePodApi();
  const mirrorSpec = {
    metadata: { name: "etcd-n1", namespace: "kube-system" },
    spec: { nodeName: "n1", containers: [] },
  };
  let mirror = api.put(mirrorSpec);
  const statics: Pod = {
    metadata: {
      name: "etcd-n1",
      namespace: "kube-system",
      uid: "static-uid",
      annotations: { "kubernetes.io/config.source": "file" },
    },
    spec: { containers: [] },
  };
  const statuses = createPodStatusManager();
  const sync = new PodStatusSync({
    api,
    statuses,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    pods: () => [statics],
    podTerminated: () => false,
    mirrorPodOf: () => ({
      namespace: "kube-system",
      name: "etcd-n1",
      uid: mirror.metadata.uid!,
    }),
  });
  statuses.setPodStatus(statics, { phase: "Running" });
  await sync.syncBatch(false);
  api.pods.delete("kube-system/etcd-n1");
  mirror = api.put(mirrorSpec);
  assert.notEqual(
    api.pods.get("kube-system/etcd-n1")?.status?.phase,
    "Running",
  );
  await sync.syncBatch(true);
  assert.equal(api.pods.get("kube-system/etcd-n1")?.status?.phase, "Running");
});
