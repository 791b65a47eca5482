import assert from "node:assert/strict";
import { ApiAlreadyExistsError, ApiConflictError } from "../../api/mod.ts";
import { FakePodApi } from "../../api/testing.ts";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { MirrorPodManager } from "./mirror_pod_manager.ts";
import { PodWorkers } from "../lifecycle/pod_workers.ts";
import { isMirrorPod, mirrorPodFor, planMirrorPods } from "./mirror_pods.ts";
import type { Pod } from "../types.ts";

const node = { name: "n1", uid: "node-uid" };

function staticPod(name: string, hash: string): Pod {
  return {
    metadata: {
      name: `${name}-n1`,
      namespace: "default",
      uid: hash,
      annotations: {
        "kubernetes.io/config.hash": hash,
        "kubernetes.io/config.source": "file",
        "kubernetes.io/config.seen": "2026-01-01T00:00:00.000Z",
      },
    },
    spec: {
      nodeName: "n1",
      containers: [{ name: "c", image: "busybox" }],
    },
  };
}

Deno.test("the mirror copy adds config.mirror = config.hash and a controller reference to the Node", () => {
  const m = mirrorPodFor(staticPod("web", "h1"), node);
  assert.deepEqual(m.metadata.annotations, {
    "kubernetes.io/config.hash": "h1",
    "kubernetes.io/config.source": "file",
    "kubernetes.io/config.seen": "2026-01-01T00:00:00.000Z",
    "kubernetes.io/config.mirror": "h1",
  });
  assert.deepEqual(m.metadata.ownerReferences, [{
    apiVersion: "v1",
    kind: "Node",
    name: "n1",
    uid: "node-uid",
    controller: true,
  }]);
  assert.equal(isMirrorPod(m), true);
  assert.equal(isMirrorPod(staticPod("web", "h1")), false);
});

Deno.test("plan: create missing, replace outdated or deleting mirrors, delete orphans, leave API pods", () => {
  const mirror = (name: string, hash: string, uid: string, extra = {}) => {
    const m = mirrorPodFor(staticPod(name, hash), node);
    m.metadata.uid = uid;
    Object.assign(m.metadata, extra);
    return m;
  };
  const apiPod: Pod = {
    metadata: { name: "api-n1", namespace: "default", uid: "a1" },
    spec: { containers: [] },
  };
  const plan = planMirrorPods(
    [
      staticPod("new", "h1"),
      staticPod("same", "h2"),
      staticPod("edited", "h3b"),
      staticPod("deleting", "h4"),
      { ...staticPod("api", "h5"), metadata: { name: "x", annotations: {} } },
    ],
    [
      mirror("same", "h2", "u2"),
      mirror("edited", "h3a", "u3"),
      mirror("deleting", "h4", "u4", {
        deletionTimestamp: "2026-01-01T00:00:00Z",
      }),
      mirror("gone", "h6", "u6"),
      apiPod,
    ],
    node,
  );
  assert.deepEqual(plan.delete.map((d) => `${d.name}/${d.uid}/${d.reason}`), [
    "edited-n1/u3/outdated",
    "deleting-n1/u4/deleting",
    "gone-n1/u6/orphaned",
  ]);
  assert.deepEqual(plan.create.map((p) => p.metadata.name), [
    "new-n1",
    "edited-n1",
    "deleting-n1",
  ]);
});

/** The pod fake with the create call the API server answers. */
function podApi() {
  const fake = new FakePodApi();
  const api = Object.assign(fake, {
    created: 0,
    createPod(pod: Pod): Promise<Pod> {
      const ns = pod.metadata.namespace ?? "default";
      if (fake.pods.has(`${ns}/${pod.metadata.name}`)) {
        return Promise.reject(
          new ApiAlreadyExistsError("exists", {
            code: 409,
            reason: "AlreadyExists",
          }),
        );
      }
      const { uid: _uid, ...metadata } = pod.metadata;
      api.created++;
      return Promise.resolve(fake.put({ ...pod, metadata }));
    },
  });
  return api;
}

Deno.test("manager: nothing before the Node is known; then mirrors follow the static pods", async () => {
  const api = podApi();
  let pods = [staticPod("web", "h1")];
  const known: { uid?: string; ready?: boolean } = {};
  const clock = new FakeClock(0);
  // Without a watch's reports the manager lists every 10 s.
  const pass = async () => {
    await clock.advance(10_000);
    return m.sync();
  };
  const m = new MirrorPodManager({
    api,
    clock,
    logger: new CaptureLogger(),
    pods: () => pods,
    nodeUid: () => known.uid,
    sourcesReady: () => known.ready === true,
  }, { nodeName: "n1" });
  assert.equal(await pass(), undefined);
  known.uid = "node-uid";
  // A mirror without its static pod is not an orphan before every source reported.
  api.put(mirrorPodFor(staticPod("other", "h9"), node));
  assert.equal(await pass(), undefined);
  assert.equal(api.pods.size, 1);
  known.ready = true;
  await pass();
  const first = api.pods.get("default/web-n1")!;
  assert.equal(
    first.metadata.annotations?.["kubernetes.io/config.mirror"],
    "h1",
  );
  // Deleted by a user: created again.
  api.remove("default", "web-n1");
  await pass();
  assert.ok(api.pods.get("default/web-n1"));
  // Manifest edited: the old mirror goes (with its UID as precondition), the new one comes.
  const before = api.pods.get("default/web-n1")!.metadata.uid;
  pods = [staticPod("web", "h2")];
  await pass();
  const del = api.calls.filter((c) => c.method === "deletePod").at(-1)!;
  assert.deepEqual(del.body, { gracePeriodSeconds: 0, uid: before });
  assert.equal(
    api.pods.get("default/web-n1")!.metadata.annotations?.[
      "kubernetes.io/config.mirror"
    ],
    "h2",
  );
  // Manifest removed: the mirror is deleted.
  pods = [];
  await pass();
  assert.equal(api.pods.size, 0);
  assert.equal(api.created, 3);
});

Deno.test("manager: a lost UID precondition or AlreadyExists is not an error", async () => {
  const api = podApi();
  const logger = new CaptureLogger();
  const m = new MirrorPodManager({
    api,
    clock: new FakeClock(0),
    logger,
    pods: () => [],
    nodeUid: () => "node-uid",
  }, { nodeName: "n1" });
  api.put(mirrorPodFor(staticPod("old", "h"), node));
  api.injectError(
    "deletePod",
    new ApiConflictError("Precondition failed", { code: 409 }),
  );
  await m.sync();
  assert.equal(
    logger.records.filter((r) => r.severity === "error").length,
    0,
  );
});

Deno.test("manager: trigger() runs a pass without waiting for the period", async () => {
  const api = podApi();
  const clock = new FakeClock(0);
  let pods: Pod[] = [];
  const m = new MirrorPodManager({
    api,
    clock,
    logger: new CaptureLogger(),
    pods: () => pods,
    nodeUid: () => "node-uid",
  }, { nodeName: "n1", periodMs: 60_000 });
  const stop = new AbortController();
  const running = m.run(stop.signal);
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
  pods = [staticPod("web", "h1")];
  m.trigger();
  for (let i = 0; i < 20 && api.pods.size === 0; i++) {
    await new Promise((r) => setTimeout(r, 0));
  }
  assert.equal(api.pods.size, 1);
  stop.abort();
  await running;
});

Deno.test("manager: observed mirror pods replace the LIST; mirrorPodOf needs a matching hash", async () => {
  const api = podApi();
  const m = new MirrorPodManager({
    api,
    clock: new FakeClock(0),
    logger: new CaptureLogger(),
    pods: () => [staticPod("web", "h2")],
    nodeUid: () => "node-uid",
  }, { nodeName: "n1" });
  const old = api.put(mirrorPodFor(staticPod("web", "h1"), node));
  m.observeMirrorPods([old]);
  assert.equal(m.mirrorPodOf(staticPod("web", "h2")), undefined);
  assert.deepEqual(m.mirrorPodOf(staticPod("web", "h1")), {
    namespace: "default",
    name: "web-n1",
    uid: old.metadata.uid,
  });
  await m.sync();
  assert.equal(api.calls.some((c) => c.method === "listPods"), false);
  // The stale report still shows the old mirror; the manager's own writes count.
  await m.sync();
  assert.equal(api.created, 1);
  const now = api.pods.get("default/web-n1")!;
  assert.notEqual(now.metadata.uid, old.metadata.uid);
  assert.equal(m.mirrorPodOf(staticPod("web", "h2"))?.uid, now.metadata.uid);
});

Deno.test("plan: a full name whose static pod is being killed keeps its mirror as it is", () => {
  const mirror = (name: string, hash: string, uid: string) => {
    const m = mirrorPodFor(staticPod(name, hash), node);
    m.metadata.uid = uid;
    return m;
  };
  const killing = new Set(["default/gone-n1", "default/edited-n1"]);
  const plan = planMirrorPods(
    [staticPod("edited", "h3b"), staticPod("other", "h7b")],
    [
      mirror("gone", "h6", "u6"),
      mirror("edited", "h3a", "u3"),
      mirror("other", "h7a", "u7"),
    ],
    node,
    (name) => killing.has(name),
  );
  assert.deepEqual(plan.delete.map((d) => `${d.name}/${d.reason}`), [
    "other-n1/outdated",
  ]);
  assert.deepEqual(plan.create.map((p) => p.metadata.name), ["other-n1"]);
});

/**
 * Real pod workers whose container takes `stopAfterMs` (fake clock) to exit after SIGTERM,
 * and the mirror manager asking them which full names are being killed.
 */
function killingNode(stopAfterMs: number) {
  const api = podApi();
  const clock = new FakeClock(0);
  const log: string[] = [];
  const workers = new PodWorkers({
    clock,
    logger: new CaptureLogger(),
    syncer: {
      syncPod(w) {
        log.push(`sync ${w.pod.metadata.uid}`);
        return Promise.resolve({ terminal: false });
      },
      async syncTerminatingPod(w, signal) {
        log.push(`kill ${w.pod.metadata.uid} grace ${w.gracePeriodSeconds}`);
        await clock.sleep(stopAfterMs, signal);
        log.push(`stopped ${w.pod.metadata.uid}`);
      },
      syncTerminatedPod() {
        return Promise.resolve();
      },
    },
  }, { random: () => 0 });
  let pods: Pod[] = [];
  const mirrors = new MirrorPodManager({
    api,
    clock,
    logger: new CaptureLogger(),
    pods: () => pods,
    nodeUid: () => "node-uid",
    isTerminatingByFullName: (name) => workers.isTerminatingByFullName(name),
  }, { nodeName: "n1" });
  /** One second passes (the container may stop meanwhile), then a mirror pass. */
  const second = async () => {
    await clock.advance(1_000);
    // Let the workers act on what the second brought (a kill may still be sleeping).
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
    await mirrors.sync();
  };
  const mirrorUid = () => api.pods.get("default/web-n1")?.metadata.uid;
  return {
    api,
    workers,
    log,
    second,
    mirrorUid,
    setPods: (next: Pod[]) => pods = next,
  };
}

function graceful(hash: string): Pod {
  const pod = staticPod("web", hash);
  pod.spec.terminationGracePeriodSeconds = 30;
  return pod;
}

Deno.test("a deleted static pod's mirror stays until its containers stopped", async () => {
  const n = killingNode(20_000);
  await using _ = n.workers;
  n.setPods([graceful("h1")]);
  n.workers.updatePod({ pod: graceful("h1"), updateType: "create" });
  await n.second();
  const uid = n.mirrorUid();
  assert.ok(uid);
  n.setPods([]);
  n.workers.updatePod({ pod: graceful("h1"), updateType: "kill" });
  for (let s = 1; s < 20; s++) {
    await n.second();
    assert.equal(n.mirrorUid(), uid, `mirror gone after ${s} s`);
  }
  await n.second();
  assert.deepEqual(n.log, ["sync h1", "kill h1 grace 30", "stopped h1"]);
  assert.equal(n.mirrorUid(), undefined);
});

Deno.test("an edited static pod keeps the old mirror, and the new pod waits, until the old one stopped", async () => {
  const n = killingNode(20_000);
  await using _ = n.workers;
  n.setPods([graceful("h1")]);
  n.workers.updatePod({ pod: graceful("h1"), updateType: "create" });
  await n.second();
  const uid = n.mirrorUid();
  // The manifest changed: the old UID is killed, the new one added with the same full name.
  n.setPods([graceful("h2")]);
  n.workers.updatePod({ pod: graceful("h1"), updateType: "kill" });
  n.workers.updatePod({ pod: graceful("h2"), updateType: "create" });
  for (let s = 1; s < 20; s++) {
    await n.second();
    assert.equal(n.mirrorUid(), uid, `mirror replaced after ${s} s`);
  }
  assert.deepEqual(n.log, ["sync h1", "kill h1 grace 30"]);
  await n.second();
  assert.deepEqual(n.log, [
    "sync h1",
    "kill h1 grace 30",
    "stopped h1",
    "sync h2",
  ]);
  assert.notEqual(n.mirrorUid(), uid);
  assert.equal(
    n.api.pods.get("default/web-n1")?.metadata.annotations?.[
      "kubernetes.io/config.mirror"
    ],
    "h2",
  );
});
