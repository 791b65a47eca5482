import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { RuntimeService } from "../../runtime/mod.ts";
import {
  type ContainerGcPolicy,
  createContainerGc,
  DEFAULT_CONTAINER_GC_POLICY,
  type GcContainer,
  type GcFileSystem,
  planContainerGc,
  planSandboxGc,
  type PodStateProvider,
  podUidFromLogDirectory,
} from "./container_gc.ts";

const NOW = 1_000_000;

function dead(
  id: string,
  uid: string,
  createdAt: number,
  extra: Partial<GcContainer> = {},
): GcContainer {
  return {
    id,
    uid,
    name: "app",
    sandboxId: `s-${uid}`,
    createdAt,
    state: "exited",
    ...extra,
  };
}

function states(
  content: string[] = [],
  runtime: string[] = [],
): PodStateProvider {
  return {
    shouldPodContentBeRemoved: (uid) => content.includes(uid),
    shouldPodRuntimeBeRemoved: (uid) => runtime.includes(uid),
  };
}

const ids = (r: { id: string }[]) => r.map((x) => x.id).sort();

const cases: {
  name: string;
  containers: GcContainer[];
  policy?: Partial<ContainerGcPolicy>;
  states?: PodStateProvider;
  allSourcesReady?: boolean;
  evictNonDeletedPods?: boolean;
  want: string[];
}[] = [
  {
    name: "keeps the newest dead instance per container (upstream default)",
    containers: [dead("a1", "p", 1), dead("a2", "p", 3), dead("a3", "p", 2)],
    want: ["a1", "a3"],
  },
  {
    name: "never removes running containers",
    containers: [
      dead("r", "p", 1, { state: "running" }),
      dead("a2", "p", 3),
    ],
    want: [],
  },
  {
    name: "keeps containers younger than the minimum age",
    containers: [dead("old", "p", NOW - 60_000), dead("new", "p", NOW - 10)],
    policy: { maxPerPodContainer: 0, minAgeMs: 30_000 },
    want: ["old"],
  },
  {
    name: "a negative per-container limit keeps everything",
    containers: [dead("a1", "p", 1), dead("a2", "p", 2)],
    policy: { maxPerPodContainer: -1 },
    want: [],
  },
  {
    name: "groups by pod UID and container name",
    containers: [
      dead("a1", "p", 1),
      dead("b1", "p", 2, { name: "side" }),
      dead("c1", "q", 3),
    ],
    want: [],
  },
  {
    name: "removes every instance of a pod whose content may go",
    containers: [dead("a1", "gone", 1), dead("a2", "gone", 2)],
    states: states(["gone"]),
    want: ["a1", "a2"],
  },
  {
    name: "keeps a deleted pod's newest instance until every source reported",
    containers: [dead("a1", "gone", 1), dead("a2", "gone", 2)],
    states: states(["gone"]),
    allSourcesReady: false,
    want: ["a1"],
  },
  {
    name: "under disk pressure also empties stopped pods that are not deleted",
    containers: [dead("a1", "done", 1)],
    states: states([], ["done"]),
    evictNonDeletedPods: true,
    want: ["a1"],
  },
  {
    name:
      "the node-wide limit trims each unit to an equal share, then the oldest",
    containers: [
      dead("p1", "p", 1),
      dead("p2", "p", 5),
      dead("q1", "q", 2),
      dead("q2", "q", 6),
      dead("r1", "r", 3),
    ],
    policy: { maxPerPodContainer: -1, maxContainers: 2 },
    // share = max(1, floor(2 / 3)) = 1: p1 and q1 go; then p2, q2, r1 → the oldest (r1) goes
    want: ["p1", "q1", "r1"],
  },
];

for (const c of cases) {
  Deno.test(`planContainerGc() ${c.name}`, () => {
    const plan = planContainerGc(
      c.containers,
      { ...DEFAULT_CONTAINER_GC_POLICY, ...c.policy },
      c.states ?? states(),
      {
        now: NOW,
        allSourcesReady: c.allSourcesReady ?? true,
        ...(c.evictNonDeletedPods ? { evictNonDeletedPods: true } : {}),
      },
    );
    assert.deepEqual(ids(plan), c.want);
  });
}

Deno.test("planContainerGc() stops unknown-state containers before removing them", () => {
  const plan = planContainerGc(
    [dead("u", "gone", 1, { state: "unknown" })],
    DEFAULT_CONTAINER_GC_POLICY,
    states(["gone"]),
    { now: NOW, allSourcesReady: true },
  );
  assert.deepEqual(plan, [{ id: "u", stopFirst: true }]);
});

Deno.test("planSandboxGc() keeps the newest sandbox of a live pod, and ready or used ones", () => {
  const sandboxes = [
    { id: "old", uid: "p", createdAt: 1, ready: false },
    { id: "used", uid: "p", createdAt: 2, ready: false },
    { id: "newest", uid: "p", createdAt: 3, ready: false },
    { id: "g-ready", uid: "gone", createdAt: 1, ready: true },
    { id: "g-dead", uid: "gone", createdAt: 2, ready: false },
  ];
  const containers = [dead("c", "p", 2, { sandboxId: "used" })];
  assert.deepEqual(
    planSandboxGc(sandboxes, containers, states(["gone"])).sort(),
    ["g-dead", "old"],
  );
});

Deno.test("podUidFromLogDirectory() takes the part after the last underscore", () => {
  assert.equal(
    podUidFromLogDirectory("kube-system_etcd-n1_abc-123"),
    "abc-123",
  );
  assert.equal(podUidFromLogDirectory("plain"), "plain");
  // the links directory of a custom podLogsDir is no pod's
  assert.equal(podUidFromLogDirectory(".containers"), "");
});

Deno.test("createContainerGc() removes the log file with its rotations, the container and a deleted pod's directories", async () => {
  const files = new Set([
    "/logs/default_web_u1/app/0.log",
    "/logs/default_web_u1/app/0.log.20260101-120000",
    "/logs/default_web_u1/app/0.log.20260101-110000.gz",
    "/logs/default_web_u1/app/1.log",
    "/logs/default_keep_u2/app/0.log",
    "/root/pods/u1/containers/app/abc",
    "/root/pods/u2/containers/app/def",
    "/mem/u1/cache/data",
    "/mem/u2/cache/data",
  ]);
  const order: string[] = [];
  const fs: GcFileSystem = {
    readDirNames(path) {
      const names = new Set<string>();
      for (const f of files) {
        if (f.startsWith(`${path}/`)) {
          names.add(f.slice(path.length + 1).split("/")[0]!);
        }
      }
      return Promise.resolve([...names]);
    },
    removeAll(path) {
      order.push(`removeAll ${path}`);
      for (const f of [...files]) {
        if (f === path || f.startsWith(`${path}/`)) files.delete(f);
      }
      return Promise.resolve();
    },
  };
  const calls: string[] = [];
  const labels = (uid: string) => ({ "io.kubernetes.pod.uid": uid });
  const runtime = {
    listContainers() {
      return Promise.resolve({
        containers: calls.includes("removeContainer c0") ? [] : [{
          id: "c0",
          podSandboxId: "s1",
          metadata: { name: "app", attempt: 0 },
          state: 2,
          createdAt: 5_000_000n,
          labels: labels("u1"),
        }],
      });
    },
    listPodSandbox() {
      return Promise.resolve({
        items: [
          { id: "s1", state: 1, createdAt: 1n, labels: labels("u1") },
          { id: "s2", state: 0, createdAt: 1n, labels: labels("u2") },
        ],
      });
    },
    containerStatus() {
      calls.push("containerStatus c0");
      return Promise.resolve({
        status: { logPath: "/logs/default_web_u1/app/0.log" },
      });
    },
    removeContainer(r: { containerId: string }) {
      calls.push(`removeContainer ${r.containerId}`);
      return Promise.resolve({});
    },
    stopPodSandbox(r: { podSandboxId: string }) {
      calls.push(`stopPodSandbox ${r.podSandboxId}`);
      return Promise.resolve({});
    },
    removePodSandbox(r: { podSandboxId: string }) {
      calls.push(`removePodSandbox ${r.podSandboxId}`);
      return Promise.resolve({});
    },
  } as unknown as RuntimeService;
  const gc = createContainerGc({
    runtime,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    fs,
    releaseVolumes(uid) {
      order.push(`release ${uid}`);
      return Promise.resolve();
    },
  }, { podLogsDir: "/logs", rootDir: "/root", memoryVolumeDir: "/mem" });
  const result = await gc.collect(states(["u1"]), { allSourcesReady: true });
  // the pod's tmpfs volumes are unmounted before its directory goes, and only under rootDir
  assert.deepEqual(
    order.filter((o) => o.startsWith("release") || / \/(root|mem)\//.test(o)),
    [
      "release u1",
      "removeAll /root/pods/u1",
      "removeAll /mem/u1",
    ],
  );
  assert.deepEqual(result, {
    containersRemoved: 1,
    sandboxesRemoved: 1,
    logDirectoriesRemoved: 1,
    errors: [],
  });
  assert.deepEqual(calls, [
    "containerStatus c0",
    "removeContainer c0",
    "stopPodSandbox s1",
    "removePodSandbox s1",
  ]);
  assert.deepEqual([...files].sort(), [
    "/logs/default_keep_u2/app/0.log",
    "/mem/u2/cache/data",
    "/root/pods/u2/containers/app/def",
  ]);
});

Deno.test("createContainerGc() removes a pruned instance's log file and its rotations only", async () => {
  const files = new Set([
    "/logs/default_web_u1/app/0.log",
    "/logs/default_web_u1/app/0.log.20260101-120000",
    "/logs/default_web_u1/app/0.log.20260101-110000.gz",
    "/logs/default_web_u1/app/1.log",
    "/logs/default_web_u1/app/10.log",
  ]);
  const fs: GcFileSystem = {
    readDirNames: (path) =>
      Promise.resolve(
        [...files].filter((f) => f.startsWith(`${path}/`)).map((f) =>
          f.slice(path.length + 1).split("/")[0]!
        ),
      ),
    removeAll(path) {
      files.delete(path);
      return Promise.resolve();
    },
  };
  const container = (id: string, attempt: number) => ({
    id,
    podSandboxId: "s1",
    metadata: { name: "app", attempt },
    state: 2,
    createdAt: BigInt(attempt + 1) * 1_000_000n,
    labels: { "io.kubernetes.pod.uid": "u1" },
  });
  const removed: string[] = [];
  const runtime = {
    listContainers: () =>
      Promise.resolve({
        containers: [container("c0", 0), container("c1", 1)].filter((c) =>
          !removed.includes(c.id)
        ),
      }),
    listPodSandbox: () => Promise.resolve({ items: [] }),
    containerStatus: (r: { containerId: string }) =>
      Promise.resolve({
        status: {
          logPath: `/logs/default_web_u1/app/${
            r.containerId === "c0" ? 0 : 1
          }.log`,
        },
      }),
    removeContainer(r: { containerId: string }) {
      removed.push(r.containerId);
      return Promise.resolve({});
    },
  } as unknown as RuntimeService;
  const gc = createContainerGc({
    runtime,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    fs,
  }, { podLogsDir: "/logs" });
  await gc.collect(states(), { allSourcesReady: true });
  assert.deepEqual(removed, ["c0"]);
  assert.deepEqual([...files].sort(), [
    "/logs/default_web_u1/app/1.log",
    "/logs/default_web_u1/app/10.log",
  ]);
});

Deno.test("createContainerGc() removes a container's log link with it and sweeps dead links", async () => {
  const fs: GcFileSystem = {
    readDirNames: () => Promise.resolve([]),
    removeAll: () => Promise.resolve(),
  };
  const labels = {
    "io.kubernetes.pod.uid": "u1",
    "io.kubernetes.pod.name": "web",
    "io.kubernetes.pod.namespace": "prod",
    "io.kubernetes.container.name": "app",
  };
  let removed = false;
  const runtime = {
    listContainers: () =>
      Promise.resolve({
        containers: removed ? [] : [{
          id: "c0",
          metadata: { name: "app", attempt: 0 },
          state: 2,
          createdAt: 5_000_000n,
          labels,
        }],
      }),
    listPodSandbox: () => Promise.resolve({ items: [] }),
    containerStatus: (r: { containerId: string }) =>
      r.containerId === "live"
        ? Promise.resolve({ status: { state: 1 } })
        : Promise.resolve({ status: { logPath: "", labels, state: 2 } }),
    removeContainer: () => {
      removed = true;
      return Promise.resolve({});
    },
  } as unknown as RuntimeService;
  const seen: string[] = [];
  const gc = createContainerGc({
    runtime,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    fs,
    logLinks: {
      remove(ref) {
        seen.push(
          `remove ${ref.podName}_${ref.podNamespace}_${ref.containerName}-${ref.containerId}`,
        );
        return Promise.resolve();
      },
      async removeStale(isRunning) {
        seen.push(
          `live=${await isRunning("live")} c0=${await isRunning("c0")}`,
        );
        return 0;
      },
    },
  }, { podLogsDir: "/logs" });
  await gc.collect(states(["u1"]), { allSourcesReady: true });
  assert.deepEqual(seen, ["remove web_prod_app-c0", "live=true c0=false"]);
});

Deno.test("createContainerGc() leaves other kubelets' memory directories (root-…) alone", async () => {
  const removed: string[] = [];
  const fs: GcFileSystem = {
    readDirNames: (path) =>
      Promise.resolve(
        path === "/mem" ? ["gone", "root-0123456789abcdef"] : [],
      ),
    removeAll(path) {
      removed.push(path);
      return Promise.resolve();
    },
  };
  const runtime = {
    listContainers: () => Promise.resolve({ containers: [] }),
    listPodSandbox: () => Promise.resolve({ items: [] }),
  } as unknown as RuntimeService;
  const gc = createContainerGc({
    runtime,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    fs,
  }, { podLogsDir: "/logs", memoryVolumeDir: "/mem" });
  await gc.collect({
    shouldPodContentBeRemoved: () => true,
    shouldPodRuntimeBeRemoved: () => true,
  }, { allSourcesReady: true });
  assert.deepEqual(removed, ["/mem/gone"]);
});

Deno.test("createContainerGc() keeps a gone pod's directory while it still holds CSI volumes", async () => {
  const files = new Set([
    "/root/pods/u1/volumes/kubernetes.io~csi/pv1/vol_data.json",
    "/root/pods/u2/volumes/kubernetes.io~empty-dir/x/data",
  ]);
  const removed: string[] = [];
  const fs: GcFileSystem = {
    readDirNames(path) {
      const names = new Set<string>();
      for (const f of files) {
        if (f.startsWith(`${path}/`)) {
          names.add(f.slice(path.length + 1).split("/")[0]!);
        }
      }
      return Promise.resolve([...names]);
    },
    removeAll(path) {
      removed.push(path);
      return Promise.resolve();
    },
  };
  const runtime = {
    listContainers: () => Promise.resolve({ containers: [] }),
    listPodSandbox: () => Promise.resolve({ items: [] }),
  } as unknown as RuntimeService;
  const gc = createContainerGc({
    runtime,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    fs,
  }, { podLogsDir: "/logs", rootDir: "/root" });
  const result = await gc.collect(states(["u1", "u2"]), {
    allSourcesReady: true,
  });
  assert.deepEqual(removed, ["/root/pods/u2"]);
  assert.equal(result.errors.length, 1);
  assert.match(result.errors[0]!, /still holds CSI volumes/);
});
