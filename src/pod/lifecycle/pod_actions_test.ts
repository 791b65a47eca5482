import assert from "node:assert/strict";
import {
  computePodActions,
  shouldContainerBeRestarted,
} from "./pod_actions.ts";
import type { PodActions } from "./pod_plan.ts";
import type {
  Container,
  Pod,
  PodRuntimeStatus,
  SandboxView,
} from "../types.ts";
import { makeContainerView, makePodRuntimeStatus } from "../testing.ts";

function pod(
  spec: Partial<Pod["spec"]> & { containers?: Container[] } = {},
  meta: Partial<Pod["metadata"]> = {},
): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1", ...meta },
    spec: { containers: [{ name: "app", image: "nginx" }], ...spec },
  };
}

function sandbox(over: Partial<SandboxView> = {}): SandboxView {
  return {
    id: "sb1",
    attempt: 0,
    ready: true,
    createdAt: 1,
    ip: "10.0.0.2",
    additionalIps: [],
    ...over,
  };
}

const ctr = makeContainerView;
const rs = makePodRuntimeStatus;

type Summary = {
  killPod: boolean;
  createSandbox: boolean;
  attempt: number;
  init: number[];
  start: number[];
  kill: string[];
};

function summary(a: PodActions): Summary {
  return {
    killPod: a.killPod,
    createSandbox: a.createSandbox,
    attempt: a.attempt,
    init: a.initContainersToStart,
    start: a.containersToStart,
    kill: [...a.containersToKill.values()].map((k) => `${k.name}:${k.reason}`),
  };
}

const app: Container = { name: "app", image: "nginx" };
const side: Container = { name: "side", image: "envoy" };
const init1: Container = { name: "init1", image: "busybox" };
const init2: Container = { name: "init2", image: "busybox" };
const sidecar: Container = {
  name: "proxy",
  image: "envoy",
  restartPolicy: "Always",
};

const none: Summary = {
  killPod: false,
  createSandbox: false,
  attempt: 0,
  init: [],
  start: [],
  kill: [],
};

const cases: {
  name: string;
  pod: Pod;
  status: PodRuntimeStatus;
  want: Summary;
}[] = [
  {
    name: "new pod creates a sandbox (attempt 0) and starts all containers",
    pod: pod({ containers: [app, side] }),
    status: rs([], []),
    want: { ...none, killPod: true, createSandbox: true, start: [0, 1] },
  },
  {
    name: "new pod with init containers starts only the first init container",
    pod: pod({ initContainers: [init1, init2] }),
    status: rs([], []),
    want: { ...none, killPod: true, createSandbox: true, init: [0] },
  },
  {
    name: "not-ready sandbox is recreated with attempt+1",
    pod: pod(),
    status: rs([sandbox({ ready: false, attempt: 2 })], [
      ctr(app, { state: "exited", exitCode: 1 }),
    ]),
    want: {
      ...none,
      killPod: true,
      createSandbox: true,
      attempt: 3,
      start: [0],
    },
  },
  {
    name: "two ready sandboxes force a new one",
    pod: pod(),
    status: rs([sandbox({ id: "b" }), sandbox({ id: "a" })], [ctr(app)]),
    want: {
      ...none,
      killPod: true,
      createSandbox: true,
      attempt: 1,
      start: [0],
    },
  },
  {
    name: "sandbox without IP is recreated for pod networking",
    pod: pod(),
    status: rs([sandbox({ ip: "" })], [ctr(app)]),
    want: {
      ...none,
      killPod: true,
      createSandbox: true,
      attempt: 1,
      start: [0],
    },
  },
  {
    name: "host-network sandbox without IP is fine",
    pod: pod({ hostNetwork: true }),
    status: rs([sandbox({ ip: "", networkMode: "node" })], [ctr(app)]),
    want: none,
  },
  {
    name: "network mode mismatch recreates the sandbox",
    pod: pod({ hostNetwork: true }),
    status: rs([sandbox({ networkMode: "pod" })], [ctr(app)]),
    want: {
      ...none,
      killPod: true,
      createSandbox: true,
      attempt: 1,
      start: [0],
    },
  },
  {
    name: "Never pod whose sandbox died is only killed",
    pod: pod({ restartPolicy: "Never" }),
    status: rs([sandbox({ ready: false })], [
      ctr(app, { state: "exited", exitCode: 0 }),
    ]),
    want: { ...none, killPod: true, attempt: 1 },
  },
  {
    name: "OnFailure pod whose containers all succeeded is not recreated",
    pod: pod({ restartPolicy: "OnFailure" }),
    status: rs([sandbox({ ready: false })], [
      ctr(app, { state: "exited", exitCode: 0 }),
    ]),
    want: { ...none, killPod: true, attempt: 1 },
  },
  {
    name: "OnFailure recreation skips succeeded containers",
    pod: pod({ restartPolicy: "OnFailure", containers: [app, side] }),
    status: rs([sandbox({ ready: false })], [
      ctr(app, { state: "exited", exitCode: 0 }),
      ctr(side, { state: "exited", exitCode: 2 }),
    ]),
    want: {
      ...none,
      killPod: true,
      createSandbox: true,
      attempt: 1,
      start: [1],
    },
  },
  {
    name: "healthy running pod needs nothing",
    pod: pod({ containers: [app, side] }),
    status: rs([sandbox()], [ctr(app), ctr(side)]),
    want: none,
  },
  {
    name: "exited container with Always is restarted",
    pod: pod(),
    status: rs([sandbox()], [ctr(app, { state: "exited", exitCode: 0 })]),
    want: { ...none, start: [0] },
  },
  {
    name: "Never: exited container stays down and the pod is done",
    pod: pod({ restartPolicy: "Never" }),
    status: rs([sandbox()], [ctr(app, { state: "exited", exitCode: 1 })]),
    want: { ...none, killPod: true },
  },
  {
    name: "OnFailure: failed container restarts, succeeded one does not",
    pod: pod({ restartPolicy: "OnFailure", containers: [app, side] }),
    status: rs([sandbox()], [
      ctr(app, { state: "exited", exitCode: 0 }),
      ctr(side, { state: "exited", exitCode: 3 }),
    ]),
    want: { ...none, start: [1] },
  },
  {
    name: "OnFailure: everything succeeded kills the pod",
    pod: pod({ restartPolicy: "OnFailure" }),
    status: rs([sandbox()], [ctr(app, { state: "exited", exitCode: 0 })]),
    want: { ...none, killPod: true },
  },
  {
    name: "image change restarts the running container even with Never",
    pod: pod({
      restartPolicy: "Never",
      containers: [{ name: "app", image: "nginx:2" }],
    }),
    status: rs([sandbox()], [ctr(app)]),
    want: { ...none, start: [0], kill: ["app:"] },
  },
  {
    name: "unknown container is killed before restart",
    pod: pod(),
    status: rs([sandbox()], [ctr(app, { state: "unknown" })]),
    want: { ...none, start: [0], kill: ["app:Unknown"] },
  },
  {
    name: "created-but-never-started container is started again",
    pod: pod({ restartPolicy: "Never" }),
    status: rs([sandbox()], [ctr(app, { state: "created" })]),
    want: { ...none, start: [0] },
  },
  {
    name: "init: first finished, second starts next",
    pod: pod({ initContainers: [init1, init2] }),
    status: rs([sandbox()], [ctr(init1, { state: "exited", exitCode: 0 })]),
    want: { ...none, init: [1] },
  },
  {
    name: "init: running init container is waited for",
    pod: pod({ initContainers: [init1, init2] }),
    status: rs([sandbox()], [ctr(init1)]),
    want: none,
  },
  {
    name: "init: no status at all starts the first init container",
    pod: pod({ initContainers: [init1, init2] }),
    status: rs([sandbox()], []),
    want: { ...none, init: [0] },
  },
  {
    name: "init: all done, app containers start",
    pod: pod({ initContainers: [init1, init2] }),
    status: rs([sandbox()], [
      ctr(init2, { state: "exited", exitCode: 0 }),
      ctr(init1, { state: "exited", exitCode: 0 }),
    ]),
    want: { ...none, start: [0] },
  },
  {
    name: "init: failed init container is retried with Always",
    pod: pod({ initContainers: [init1, init2] }),
    status: rs([sandbox()], [ctr(init1, { state: "exited", exitCode: 1 })]),
    want: { ...none, init: [0] },
  },
  {
    name: "init: failed init container with Never kills the pod",
    pod: pod({ restartPolicy: "Never", initContainers: [init1, init2] }),
    status: rs([sandbox()], [ctr(init1, { state: "exited", exitCode: 1 })]),
    want: { ...none, killPod: true },
  },
  {
    name: "init: OOMKilled counts as failed even with exit 0",
    pod: pod({ restartPolicy: "Never", initContainers: [init1] }),
    status: rs([sandbox()], [
      ctr(init1, { state: "exited", exitCode: 0, reason: "OOMKilled" }),
    ]),
    want: { ...none, killPod: true },
  },
  {
    name:
      "init: a running app container means init is done even if init statuses are gone",
    pod: pod({ initContainers: [init1, init2] }),
    status: rs([sandbox()], [ctr(app)]),
    want: none,
  },
  {
    name: "sidecar: running sidecar lets the next init container start",
    pod: pod({ initContainers: [sidecar, init1] }),
    status: rs([sandbox()], [ctr(sidecar)]),
    want: { ...none, init: [1] },
  },
  {
    name: "sidecar: exited sidecar is restarted while apps keep running",
    pod: pod({ initContainers: [sidecar] }),
    status: rs([sandbox()], [
      ctr(sidecar, { state: "exited", exitCode: 1 }),
      ctr(app),
    ]),
    want: { ...none, init: [0] },
  },
  {
    name: "sidecar: finished apps do not keep the pod alive",
    pod: pod({ restartPolicy: "Never", initContainers: [sidecar] }),
    status: rs([sandbox()], [
      ctr(sidecar),
      ctr(app, { state: "exited", exitCode: 0 }),
    ]),
    want: { ...none, killPod: true },
  },
  {
    name: "new sandbox with a sidecar starts the sidecar first",
    pod: pod({ initContainers: [sidecar] }),
    status: rs([], []),
    want: { ...none, killPod: true, createSandbox: true, init: [0] },
  },
];

for (const c of cases) {
  Deno.test(`computePodActions() ${c.name}`, () => {
    assert.deepEqual(summary(computePodActions(c.pod, c.status)), c.want);
  });
}

Deno.test("computePodActions() kills a container whose liveness probe failed", () => {
  const p = pod({ restartPolicy: "Never" });
  const status = rs([sandbox()], [ctr(app)]);
  const got = summary(
    computePodActions(p, status, {
      livenessResults: new Map([["id-app", "failure"]]),
    }),
  );
  // nothing is kept and nothing restarts (Never): the pod is finished
  assert.deepEqual(got, {
    ...none,
    killPod: true,
    kill: ["app:LivenessProbe"],
  });
  const always = summary(
    computePodActions(pod(), status, {
      startupResults: new Map([["id-app", "failure"]]),
    }),
  );
  assert.deepEqual(always, { ...none, start: [0], kill: ["app:StartupProbe"] });
});

Deno.test("computePodActions() keeps the current sandbox id and attempt", () => {
  const a = computePodActions(
    pod(),
    rs([sandbox({ id: "keep", attempt: 4 })], [ctr(app)]),
  );
  assert.equal(a.sandboxId, "keep");
  assert.equal(a.attempt, 4);
});

Deno.test("computePodActions() says why a changed container is killed", () => {
  const a = computePodActions(
    pod({ containers: [{ name: "app", image: "nginx:2" }] }),
    rs([sandbox()], [ctr(app)]),
  );
  assert.equal(
    a.containersToKill.get("id-app")?.message,
    "Container app definition changed, will be restarted",
  );
});

Deno.test("shouldContainerBeRestarted() never restarts containers of a deleted pod", () => {
  const p = pod({}, { deletionTimestamp: "2026-01-01T00:00:00Z" });
  assert.equal(shouldContainerBeRestarted(app, p, rs([sandbox()], [])), false);
  assert.equal(
    shouldContainerBeRestarted(app, pod(), rs([sandbox()], [])),
    true,
  );
});

Deno.test("computePodActions() kills and restarts a regular init container in an unknown state unless restartPolicy is Never", () => {
  // upstream computeInitContainerActions: a regular init container whose state is unknown is
  // killed and started again when the pod restarts on failure; with Never the pod is killed
  const status = rs([sandbox()], [ctr(init1, { state: "unknown" })]);
  for (const restartPolicy of ["Always", "OnFailure"] as const) {
    assert.deepEqual(
      summary(
        computePodActions(
          pod({ restartPolicy, initContainers: [init1, init2] }),
          status,
        ),
      ),
      { ...none, init: [0], kill: ["init1:Unknown"] },
      restartPolicy,
    );
  }
  assert.deepEqual(
    summary(
      computePodActions(
        pod({ restartPolicy: "Never", initContainers: [init1, init2] }),
        status,
      ),
    ),
    { ...none, killPod: true },
  );
});

Deno.test("computePodActions() restarts a container that failed liveness or startup under OnFailure", () => {
  // upstream computePodActions: a probe kill restarts unless the policy is Never
  const p = pod({ restartPolicy: "OnFailure" });
  const status = rs([sandbox()], [ctr(app)]);
  const liveness = summary(
    computePodActions(p, status, {
      livenessResults: new Map([["id-app", "failure"]]),
    }),
  );
  assert.deepEqual(liveness, {
    ...none,
    start: [0],
    kill: ["app:LivenessProbe"],
  });
  const startup = summary(
    computePodActions(p, status, {
      startupResults: new Map([["id-app", "failure"]]),
    }),
  );
  assert.deepEqual(startup, {
    ...none,
    start: [0],
    kill: ["app:StartupProbe"],
  });
});

Deno.test("computePodActions() starts each ephemeral container once, even before initialization, never after it ran", () => {
  const debug = { name: "debug", image: "busybox" };
  const p = pod({
    initContainers: [init1],
    ephemeralContainers: [debug, { name: "done", image: "busybox" }],
  });
  // init1 still running: the ephemeral containers start all the same
  const initializing = computePodActions(
    p,
    rs([sandbox()], [ctr(init1), ctr({ name: "done" }, { state: "exited" })]),
  );
  assert.deepEqual(initializing.ephemeralContainersToStart, [0]);
  assert.deepEqual(initializing.containersToStart, []);
  // a new sandbox: nothing ephemeral (the API refuses them at pod creation)
  assert.deepEqual(
    computePodActions(p, rs([], []))
      .ephemeralContainersToStart,
    [],
  );
  // an exited ephemeral container is never restarted, nor does it keep the pod alive
  const finished = computePodActions(
    pod({ restartPolicy: "Never", ephemeralContainers: [debug] }),
    rs([sandbox()], [
      ctr(app, { state: "exited", exitCode: 0 }),
      ctr(debug, { state: "running" }),
    ]),
  );
  assert.deepEqual(finished.ephemeralContainersToStart, []);
  assert.equal(finished.killPod, true);
});
