import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import type {
  Container,
  ContainerView,
  Pod,
  PodCondition,
  PodRuntimeStatus,
  SandboxView,
} from "../types.ts";
import { computePodStatus } from "./compute_pod_status.ts";
import { terminatePodStatus } from "./terminate_pod_status.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function pod(spec: Partial<Pod["spec"]> = {}): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: { containers: [{ name: "app", image: "nginx:1.27" }], ...spec },
  };
}

const sandbox: SandboxView = {
  id: "sb",
  attempt: 0,
  ready: true,
  createdAt: T0,
  ip: "10.0.0.5",
  additionalIps: ["fd00::5"],
};

function view(c: Container, over: Partial<ContainerView> = {}): ContainerView {
  return {
    id: `id-${c.name}-${over.restartCount ?? 0}`,
    name: c.name,
    sandboxId: "sb",
    state: "running",
    createdAt: T0,
    startedAt: T0 + 1000,
    finishedAt: 0,
    exitCode: 0,
    reason: "",
    message: "",
    image: c.image ?? "",
    imageRef: "sha256:abc",
    hash: "",
    restartCount: 0,
    containerType: "container",
    ...over,
  };
}

function rs(
  containers: ContainerView[],
  sandboxes: SandboxView[] = [sandbox],
): PodRuntimeStatus {
  return {
    uid: "u1",
    name: "web",
    namespace: "default",
    sandboxes,
    containers,
  };
}

const app: Container = { name: "app", image: "nginx:1.27" };

Deno.test("computePodStatus() reports a running pod", () => {
  const clock = new FakeClock(T0 + 5000);
  const s = computePodStatus(pod(), rs([view(app)]), {
    clock,
    hostIPs: ["192.168.1.1"],
  });
  assert.equal(s.phase, "Running");
  assert.equal(s.podIP, "10.0.0.5");
  assert.deepEqual(s.podIPs, [{ ip: "10.0.0.5" }, { ip: "fd00::5" }]);
  assert.equal(s.hostIP, "192.168.1.1");
  assert.equal(s.startTime, "2026-01-01T12:00:05Z");
  assert.equal(s.qosClass, "BestEffort");
  assert.deepEqual(s.containerStatuses, [{
    name: "app",
    state: { running: { startedAt: "2026-01-01T12:00:01Z" } },
    lastState: {},
    ready: true,
    started: true,
    restartCount: 0,
    image: "nginx:1.27",
    imageID: "sha256:abc",
    containerID: "containerd://id-app-0",
    resources: {},
  }]);
  assert.deepEqual(s.conditions?.map((c) => [c.type, c.status]), [
    ["PodReadyToStartContainers", "True"],
    ["Initialized", "True"],
    ["Ready", "True"],
    ["ContainersReady", "True"],
    ["PodScheduled", "True"],
  ]);
  assert.equal(s.observedGeneration, undefined);
});

Deno.test("computePodStatus() lists app containers by name, with the generation it saw, running containers' resources and volume mounts", () => {
  const zeta: Container = {
    name: "zeta",
    image: "busybox",
    resources: { requests: { cpu: "100m" }, limits: { memory: "64Mi" } },
    volumeMounts: [{ name: "data", mountPath: "/data" }, {
      name: "conf",
      mountPath: "/etc/app",
      readOnly: true,
    }],
  };
  const init: Container[] = [{ name: "z-init", image: "busybox" }, {
    name: "a-init",
    image: "busybox",
  }];
  const p = pod({ containers: [zeta, app], initContainers: init });
  p.metadata.generation = 3;
  const s = computePodStatus(
    p,
    rs([
      view(zeta),
      view(init[0]!, { state: "exited" }),
      view(init[1]!, { state: "exited" }),
    ]),
    { clock: new FakeClock(T0) },
  );
  assert.deepEqual(s.containerStatuses?.map((c) => [c.name, c.resources]), [
    ["app", undefined],
    ["zeta", { requests: { cpu: "100m" }, limits: { memory: "64Mi" } }],
  ]);
  assert.deepEqual(s.initContainerStatuses?.map((c) => c.name), [
    "z-init",
    "a-init",
  ]);
  assert.deepEqual(s.containerStatuses?.[1]?.volumeMounts, [
    { name: "data", mountPath: "/data" },
    {
      name: "conf",
      mountPath: "/etc/app",
      readOnly: true,
      recursiveReadOnly: "Disabled",
    },
  ]);
  assert.equal(s.containerStatuses?.[0]?.volumeMounts, undefined);
  assert.equal(s.observedGeneration, 3);
  assert.ok(s.conditions?.every((c) => c.observedGeneration === 3));
});

Deno.test("computePodStatus() shows ContainerCreating before anything runs", () => {
  const clock = new FakeClock(T0);
  const s = computePodStatus(pod(), rs([], []), { clock });
  assert.equal(s.phase, "Pending");
  assert.deepEqual(s.containerStatuses?.[0]?.state, {
    waiting: { reason: "ContainerCreating" },
  });
  const ready = s.conditions?.find((c) => c.type === "Ready");
  assert.deepEqual([ready?.status, ready?.reason, ready?.message], [
    "False",
    "ContainersNotReady",
    "containers with unready status: [app]",
  ]);
  assert.equal(
    s.conditions?.find((c) => c.type === "PodReadyToStartContainers")?.status,
    "False",
  );
});

Deno.test("computePodStatus() shows the back-off reason with the last termination", () => {
  const clock = new FakeClock(T0 + 60_000);
  const exited = view(app, {
    state: "exited",
    exitCode: 2,
    finishedAt: T0 + 2000,
    restartCount: 3,
  });
  const s = computePodStatus(pod(), rs([exited]), {
    clock,
    syncResults: [{
      action: "StartContainer",
      target: "app",
      reason: "CrashLoopBackOff",
      message:
        "back-off 40s restarting failed container=app pod=web_default(u1)",
    }],
  });
  const cs = s.containerStatuses![0]!;
  assert.deepEqual(cs.state, {
    waiting: {
      reason: "CrashLoopBackOff",
      message:
        "back-off 40s restarting failed container=app pod=web_default(u1)",
    },
  });
  assert.equal(cs.lastState.terminated?.exitCode, 2);
  assert.equal(cs.lastState.terminated?.reason, "Error");
  assert.equal(cs.restartCount, 3);
  assert.equal(
    s.phase,
    "Running",
    "restartPolicy Always keeps a crash-looping pod Running",
  );
});

Deno.test("computePodStatus() takes the previous instance as lastState", () => {
  const clock = new FakeClock(T0);
  const old = view(app, {
    state: "exited",
    exitCode: 137,
    reason: "OOMKilled",
    restartCount: 0,
    createdAt: T0,
  });
  const cur = view(app, { restartCount: 1, createdAt: T0 + 10 });
  const s = computePodStatus(pod(), rs([cur, old]), { clock });
  const cs = s.containerStatuses![0]!;
  assert.ok(cs.state.running);
  assert.equal(cs.lastState.terminated?.reason, "OOMKilled");
  assert.equal(cs.lastState.terminated?.exitCode, 137);
});

const phaseCases: {
  name: string;
  policy: "Always" | "OnFailure" | "Never";
  codes: number[];
  terminal?: boolean;
  want: string;
}[] = [
  {
    name: "Never, all exit 0",
    policy: "Never",
    codes: [0, 0],
    want: "Succeeded",
  },
  {
    name: "Never, one failure",
    policy: "Never",
    codes: [0, 1],
    want: "Failed",
  },
  {
    name: "OnFailure, one failure",
    policy: "OnFailure",
    codes: [0, 1],
    want: "Running",
  },
  {
    name: "OnFailure, all succeeded",
    policy: "OnFailure",
    codes: [0, 0],
    want: "Succeeded",
  },
  {
    name: "Always, all exited",
    policy: "Always",
    codes: [0, 1],
    want: "Running",
  },
  {
    name: "Always, terminal with failures",
    policy: "Always",
    codes: [0, 1],
    terminal: true,
    want: "Failed",
  },
  {
    name: "Always, terminal all succeeded",
    policy: "Always",
    codes: [0, 0],
    terminal: true,
    want: "Succeeded",
  },
];

for (const c of phaseCases) {
  Deno.test(`computePodStatus() phase: ${c.name} → ${c.want}`, () => {
    const clock = new FakeClock(T0);
    const containers = c.codes.map((_, i) => ({
      name: `c${i}`,
      image: "busybox",
    }));
    const views = containers.map((ct, i) =>
      view(ct, { state: "exited", exitCode: c.codes[i]!, finishedAt: T0 })
    );
    const s = computePodStatus(
      pod({ restartPolicy: c.policy, containers }),
      rs(views),
      {
        clock,
        podIsTerminal: c.terminal ?? false,
      },
    );
    assert.equal(s.phase, c.want);
  });
}

Deno.test("computePodStatus() keeps a terminal phase sticky", () => {
  const clock = new FakeClock(T0);
  const s = computePodStatus(pod(), rs([view(app)]), {
    clock,
    previous: { phase: "Succeeded" },
  });
  assert.equal(s.phase, "Succeeded");
});

Deno.test("computePodStatus() merges phases as upstream: a computed terminal phase wins over ours, the API's never changes", () => {
  const clock = new FakeClock(T0);
  const exited = (code: number) =>
    rs([view(app, { state: "exited", exitCode: code, finishedAt: T0 })]);
  const always = pod({ restartPolicy: "Always" });
  // the kill's Failed gives way to the containers' outcome once the pod is terminal
  assert.equal(
    computePodStatus(always, exited(0), {
      clock,
      podIsTerminal: true,
      previous: { phase: "Failed" },
    }).phase,
    "Succeeded",
  );
  // a running pod keeps a terminal phase given before, ours first, then the API's
  assert.equal(
    computePodStatus(always, rs([view(app)]), {
      clock,
      previous: { phase: "Failed" },
    }).phase,
    "Failed",
  );
  const apiFailed = { ...always, status: { phase: "Failed" as const } };
  assert.equal(
    computePodStatus(apiFailed, rs([view(app)]), { clock }).phase,
    "Failed",
  );
  // the API's terminal phase stands against any other
  assert.equal(
    computePodStatus(apiFailed, exited(0), { clock, podIsTerminal: true })
      .phase,
    "Failed",
  );
});

Deno.test("computePodStatus() waits on init containers with PodInitializing", () => {
  const clock = new FakeClock(T0);
  const init: Container = { name: "setup", image: "busybox" };
  const p = pod({ initContainers: [init] });
  const s = computePodStatus(p, rs([view(init)]), { clock });
  assert.equal(s.phase, "Pending");
  assert.deepEqual(s.containerStatuses?.[0]?.state, {
    waiting: { reason: "PodInitializing" },
  });
  assert.equal(s.initContainerStatuses?.[0]?.ready, false);
  const initialized = s.conditions?.find((c) => c.type === "Initialized");
  assert.deepEqual([
    initialized?.status,
    initialized?.reason,
    initialized?.message,
  ], [
    "False",
    "ContainersNotInitialized",
    "containers with incomplete status: [setup]",
  ]);
  const failed = computePodStatus(
    pod({ initContainers: [init], restartPolicy: "Never" }),
    rs([view(init, { state: "exited", exitCode: 1 })]),
    { clock },
  );
  assert.equal(failed.phase, "Failed");
  const failedInit = failed.conditions?.find((c) => c.type === "Initialized");
  assert.deepEqual(
    [failedInit?.status, failedInit?.reason, failedInit?.message],
    [
      "False",
      "ContainersNotInitialized",
      "containers with incomplete status: [setup]",
    ],
  );
  const done = computePodStatus(
    pod({ initContainers: [init], restartPolicy: "Never" }),
    rs([
      view(init, { state: "exited", exitCode: 0 }),
      view(app, { state: "exited", exitCode: 0 }),
    ]),
    { clock },
  );
  assert.equal(done.phase, "Succeeded");
  const doneInit = done.conditions?.find((c) => c.type === "Initialized");
  assert.deepEqual([doneInit?.status, doneInit?.reason], [
    "True",
    "PodCompleted",
  ]);
});

Deno.test("computePodStatus() respects readiness results and probes", () => {
  const clock = new FakeClock(T0);
  const probed = pod({
    containers: [{ ...app, readinessProbe: { httpGet: { port: 80 } } }],
  });
  const unprobed = computePodStatus(probed, rs([view(app)]), { clock });
  assert.equal(
    unprobed.containerStatuses?.[0]?.ready,
    false,
    "a readiness probe must pass first",
  );
  const ok = computePodStatus(probed, rs([view(app)]), {
    clock,
    readiness: new Map([["id-app-0", true]]),
  });
  assert.equal(ok.containerStatuses?.[0]?.ready, true);
});

Deno.test("computePodStatus() keeps lastTransitionTime while a condition holds", async () => {
  const clock = new FakeClock(T0);
  const first = computePodStatus(pod(), rs([view(app)]), { clock });
  await clock.advance(60_000);
  const second = computePodStatus(pod(), rs([view(app)]), {
    clock,
    previous: first,
  });
  assert.equal(second.startTime, first.startTime);
  const t = (s: typeof first) =>
    s.conditions?.find((c) => c.type === "Ready")?.lastTransitionTime;
  assert.equal(t(second), t(first));
  const third = computePodStatus(pod(), rs([]), { clock, previous: second });
  assert.equal(t(third), "2026-01-01T12:01:00Z");
});

Deno.test("computePodStatus() computes the QoS class", () => {
  const clock = new FakeClock(T0);
  // requests equal to limits (static pods get them from limits when omitted: applyApiDefaults)
  const g = pod({
    containers: [{
      ...app,
      resources: {
        limits: { cpu: "1", memory: "1Gi" },
        requests: { cpu: "1", memory: "1Gi" },
      },
    }],
  });
  assert.equal(computePodStatus(g, rs([]), { clock }).qosClass, "Guaranteed");
  const b = pod({
    containers: [{ ...app, resources: { requests: { cpu: "100m" } } }],
  });
  assert.equal(computePodStatus(b, rs([]), { clock }).qosClass, "Burstable");
});

Deno.test("terminatePodStatus() marks unterminated containers unknown and fails the pod", () => {
  const clock = new FakeClock(T0);
  const s = terminatePodStatus(
    computePodStatus(pod(), rs([view(app)]), { clock }),
  );
  assert.equal(s.phase, "Failed");
  assert.deepEqual(s.containerStatuses?.[0]?.state, {
    terminated: {
      exitCode: 137,
      reason: "ContainerStatusUnknown",
      message: "The container could not be located when the pod was terminated",
    },
  });
  const staticPod = terminatePodStatus(
    computePodStatus(pod(), rs([view(app)]), { clock }),
    { isStatic: true },
  );
  assert.equal(staticPod.phase, "Running");
});

Deno.test("computePodStatus() keeps a pod whose init container failed Pending unless restartPolicy is Never", () => {
  // upstream getPhase: a failed init container fails the pod only under Never; otherwise it
  // will be retried and the pod stays Pending
  const clock = new FakeClock(T0);
  const init: Container = { name: "setup", image: "busybox" };
  const failedInit = rs([
    view(init, { state: "exited", exitCode: 1, finishedAt: T0 }),
  ]);
  const phases = (["OnFailure", "Always", "Never"] as const).map((policy) =>
    computePodStatus(
      pod({ initContainers: [init], restartPolicy: policy }),
      failedInit,
      { clock },
    ).phase
  );
  assert.deepEqual(phases, ["Pending", "Pending", "Failed"]);
});

Deno.test("terminatePodStatus() leaves regular containers waiting when an init container failed the pod", () => {
  // upstream TerminatePod/hasPodInitialized: regular containers are only marked once the pod
  // initialized; of the init containers, only those up to the last attempted one
  const clock = new FakeClock(T0);
  const first: Container = { name: "first", image: "busybox" };
  const second: Container = { name: "second", image: "busybox" };
  const p = pod({ initContainers: [first, second], restartPolicy: "Never" });
  const computed = computePodStatus(
    p,
    rs([view(first, { state: "exited", exitCode: 1, finishedAt: T0 })]),
    { clock },
  );
  assert.equal(computed.phase, "Failed");
  const s = terminatePodStatus(computed, { initContainers: 2 });
  assert.equal(s.containerStatuses?.[0]?.state.terminated, undefined);
  assert.equal(
    s.containerStatuses?.[0]?.state.waiting?.reason,
    "PodInitializing",
  );
  assert.equal(s.initContainerStatuses?.[0]?.state.terminated?.exitCode, 1);
  assert.equal(s.initContainerStatuses?.[1]?.state.terminated, undefined);
  // once the last init container succeeded, regular containers without a state are marked
  const initialized = terminatePodStatus(
    computePodStatus(
      p,
      rs([
        view(first, { state: "exited", exitCode: 0, finishedAt: T0 }),
        view(second, { state: "exited", exitCode: 0, finishedAt: T0 }),
      ]),
      { clock },
    ),
    { initContainers: 2 },
  );
  assert.equal(
    initialized.containerStatuses?.[0]?.state.terminated?.reason,
    "ContainerStatusUnknown",
  );
});

Deno.test("computePodStatus() reports ephemeral containers apart: never ready, no started, not in Ready or the phase", () => {
  const clock = new FakeClock(T0 + 5000);
  const app: Container = { name: "app", image: "nginx:1.27" };
  const debug: Container = { name: "debug", image: "busybox" };
  const waiting: Container = { name: "later", image: "busybox" };
  const p = pod({ ephemeralContainers: [debug, waiting] });
  const s = computePodStatus(
    p,
    rs([view(app), view(debug, { state: "exited", exitCode: 3 })]),
    {
      clock,
      syncResults: [{
        action: "StartContainer",
        target: "later",
        reason: "ErrImagePull",
        message: "no such image",
      }],
    },
  );
  assert.equal(s.phase, "Running");
  assert.deepEqual(s.containerStatuses?.map((c) => c.name), ["app"]);
  const [d, l] = s.ephemeralContainerStatuses!;
  assert.equal(d!.name, "debug");
  assert.equal(d!.state.terminated?.exitCode, 3);
  assert.equal(d!.ready, false);
  assert.equal("started" in d!, false);
  assert.deepEqual(l!.state, {
    waiting: { reason: "ErrImagePull", message: "no such image" },
  });
  assert.equal(
    s.conditions?.find((c) => c.type === "Ready")?.status,
    "True",
  );
  assert.equal(
    computePodStatus(pod(), rs([view(app)]), { clock })
      .ephemeralContainerStatuses,
    undefined,
  );
});

Deno.test("computePodStatus() reports the allocation, its requests as allocatedResources and the applied memory request", () => {
  // `pod` is the pod as allocated: a resize not yet granted never reaches it
  const allocated: Container = {
    name: "app",
    image: "busybox",
    resources: {
      requests: { cpu: "100m", memory: "64Mi" },
      limits: { cpu: "200m", memory: "128Mi" },
    },
  };
  const s = computePodStatus(
    pod({ containers: [allocated] }),
    rs([view(allocated)]),
    {
      clock: new FakeClock(T0),
      resize: {
        conditions: [],
        // the memory request applied last is still the old one
        actuated: () => ({ requests: { cpu: "100m", memory: "32Mi" } }),
      },
    },
  );
  assert.deepEqual(s.containerStatuses?.[0]?.resources, {
    requests: { cpu: "100m", memory: "32Mi" },
    limits: { cpu: "200m", memory: "128Mi" },
  });
  assert.deepEqual(s.containerStatuses?.[0]?.allocatedResources, {
    cpu: "100m",
    memory: "64Mi",
  });
});

Deno.test("computePodStatus() takes cpu and memory figures the runtime reports over the spec", () => {
  const c: Container = {
    name: "app",
    image: "busybox",
    resources: {
      requests: { cpu: "0.3", memory: "32Mi" },
      limits: { cpu: "0.3", memory: "128Mi" },
    },
  };
  const s = computePodStatus(
    pod({ containers: [c] }),
    rs([view(c, {
      resources: {
        cpuPeriod: 100_000,
        cpuQuota: 20_000,
        cpuShares: 204,
        memoryLimitBytes: 67_108_864,
      },
    })]),
    { clock: new FakeClock(T0) },
  );
  assert.deepEqual(s.containerStatuses?.[0]?.resources, {
    requests: { cpu: "200m", memory: "32Mi" },
    limits: { cpu: "200m", memory: "67108864" },
  });
  // figures equal to the spec keep the spec's spelling
  const same = computePodStatus(
    pod({ containers: [c] }),
    rs([view(c, {
      resources: {
        cpuPeriod: 100_000,
        cpuQuota: 30_000,
        cpuShares: 307,
        memoryLimitBytes: 134_217_728,
      },
    })]),
    { clock: new FakeClock(T0) },
  );
  assert.deepEqual(same.containerStatuses?.[0]?.resources, c.resources);
});

Deno.test("computePodStatus() carries the resize conditions with their own times and generation, none when terminal", () => {
  const c: Container = { name: "app", image: "busybox" };
  const pending: PodCondition = {
    type: "PodResizePending",
    status: "True",
    reason: "Deferred",
    message: "Node didn't have enough resource: cpu",
    lastProbeTime: "2026-01-01T00:00:00Z",
    lastTransitionTime: "2026-01-01T00:00:00Z",
    observedGeneration: 2,
  };
  const p = pod({ containers: [c] });
  p.metadata.generation = 3;
  const s = computePodStatus(p, rs([view(c)]), {
    clock: new FakeClock(T0),
    resize: { conditions: [pending], actuated: () => undefined },
  });
  assert.deepEqual(
    s.conditions?.find((x) => x.type === "PodResizePending"),
    pending,
  );
  const done = computePodStatus(p, rs([view(c)]), {
    clock: new FakeClock(T0),
    previous: { phase: "Failed" },
    resize: { conditions: [pending], actuated: () => undefined },
  });
  assert.equal(
    done.conditions?.some((x) => x.type === "PodResizePending"),
    false,
  );
});

Deno.test("computePodStatus() is Pending again while an init container reruns in a new sandbox", () => {
  // the node restarted: the old sandbox is gone, the init container runs in the new one and
  // the regular container's last instance is in the old sandbox
  const clock = new FakeClock(T0 + 60_000);
  const init: Container = { name: "init", image: "busybox" };
  const regular: Container = { name: "regular", image: "busybox" };
  const p = pod({ initContainers: [init], containers: [regular] });
  const old: SandboxView = { ...sandbox, id: "sb-old", ready: false };
  const fresh: SandboxView = {
    ...sandbox,
    id: "sb-new",
    attempt: 1,
    createdAt: T0 + 50_000,
  };
  const containers = [
    view(init, {
      sandboxId: "sb-new",
      containerType: "init",
      restartCount: 1,
      createdAt: T0 + 51_000,
    }),
    view(init, {
      sandboxId: "sb-old",
      containerType: "init",
      state: "exited",
      finishedAt: T0 + 2000,
    }),
    view(regular, {
      sandboxId: "sb-old",
      state: "exited",
      exitCode: 137,
      createdAt: T0 + 3000,
      finishedAt: T0 + 40_000,
    }),
  ];
  const s = computePodStatus(p, rs(containers, [fresh, old]), { clock });
  assert.ok(s.initContainerStatuses?.[0]?.state.running);
  assert.equal(s.phase, "Pending");
});

Deno.test("computePodStatus() counts a starting sidecar as pending only until a regular container runs in the current sandbox", () => {
  const clock = new FakeClock(T0 + 5000);
  const sidecar: Container = {
    name: "side",
    image: "busybox",
    restartPolicy: "Always",
    startupProbe: { exec: { command: ["true"] } },
  };
  const p = pod({ initContainers: [sidecar] });
  const side = view(sidecar, { containerType: "init" });
  const notStarted = new Map([[side.id, false]]);
  assert.equal(
    computePodStatus(p, rs([side]), { clock, started: notStarted }).phase,
    "Pending",
  );
  assert.equal(
    computePodStatus(p, rs([side, view(app)]), { clock, started: notStarted })
      .phase,
    "Running",
  );
  // a regular container of an earlier sandbox does not count
  const earlier = view(app, { sandboxId: "sb-old" });
  assert.equal(
    computePodStatus(p, rs([side, earlier]), { clock, started: notStarted })
      .phase,
    "Pending",
  );
});

Deno.test("computePodStatus() keeps a pod Running while its sidecar waits to restart", () => {
  const clock = new FakeClock(T0 + 60_000);
  const sidecar: Container = {
    name: "side",
    image: "busybox",
    restartPolicy: "Always",
  };
  const p = pod({ initContainers: [sidecar] });
  const crashed = view(sidecar, {
    containerType: "init",
    state: "exited",
    exitCode: 1,
    finishedAt: T0 + 30_000,
  });
  const s = computePodStatus(p, rs([crashed, view(app)]), {
    clock,
    syncResults: [{
      action: "StartContainer",
      target: "side",
      reason: "CrashLoopBackOff",
      message: "back-off 10s restarting failed container",
    }],
  });
  assert.ok(s.initContainerStatuses?.[0]?.state.waiting);
  assert.ok(s.initContainerStatuses?.[0]?.lastState.terminated);
  assert.equal(s.phase, "Running");
});
