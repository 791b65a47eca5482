import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createSimRuntime } from "../../runtime/testing.ts";
import { createContainerBackoff } from "../containers/backoff.ts";
import { type ExecuteDeps, executePodActions } from "./execute_pod_actions.ts";
import { createImagePuller } from "../images/image_puller.ts";
import { createInitContainerCleaner } from "./init_container_cleanup.ts";
import { computePodActions } from "./pod_actions.ts";
import type { PodActions } from "./pod_plan.ts";
import { getPodRuntimeStatus } from "../status/runtime_pod_status.ts";
import { STANDALONE_RUNTIME_HANDLERS } from "./runtime_class.ts";
import type { Pod, PodRuntimeStatus } from "../types.ts";
import { createUserNamespaceManager } from "../../userns/mod.ts";
import {
  startedUserNamespacedPods,
  startedUserNamespacedPodsErrors,
} from "../../metrics/mod.ts";

/** The user namespaced pods counters now: [started, errors]. */
const usernsCounts = () => [
  startedUserNamespacedPods.labels().value,
  startedUserNamespacedPodsErrors.labels().value,
];
import { fixedHandlers, MemoryPodDirs } from "../../userns/testing.ts";

function setup() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock });
  const logger = new CaptureLogger();
  const kill = { runtime, logger, clock, runtimeRequestTimeoutMs: 120_000 };
  const mkdir = () => Promise.resolve();
  const messageWriter = {
    createFile: () => Promise.resolve(),
    remove: () => Promise.resolve(),
    removeEmptyDir: () => Promise.resolve(),
  };
  const deps: ExecuteDeps = {
    runtime,
    logger,
    kill,
    start: {
      kill,
      runtime,
      logger,
      backoff: createContainerBackoff({ clock }),
      puller: createImagePuller({ images: runtime, clock, logger }, {
        serializeImagePulls: true,
      }),
      mkdir,
      readDirNames: () => Promise.resolve([]),
      podLogsDir: "/var/log/pods",
      messageWriter,
      nodeName: "node-a",
      hostIPs: [],
    },
    initContainers: createInitContainerCleaner({
      runtime,
      logger,
      messageWriter,
    }),
    mkdir,
    podLogsDir: "/var/log/pods",
    runtimeHandlers: STANDALONE_RUNTIME_HANDLERS,
  };
  return { runtime, logger, deps, signal: new AbortController().signal };
}

const pod: Pod = {
  metadata: { name: "web", namespace: "default", uid: "u1" },
  spec: {
    initContainers: [{ name: "init", image: "busybox" }],
    containers: [{ name: "app", image: "nginx" }],
  },
};

const empty: PodRuntimeStatus = {
  uid: "u1",
  name: "web",
  namespace: "default",
  sandboxes: [],
  containers: [],
};

function run(
  s: ReturnType<typeof setup>,
  actions: PodActions,
  status = empty,
) {
  return executePodActions(s.deps, {
    pod,
    status,
    actions,
    signal: s.signal,
    logger: s.logger,
  });
}

Deno.test("executePodActions() creates the sandbox, then starts only the planned init container", async () => {
  const s = setup();
  const results = await run(s, computePodActions(pod, empty));
  assert.deepEqual(results.map((r) => [r.action, r.reason]), [
    ["CreatePodSandbox", undefined],
    ["StartContainer", undefined],
  ]);
  assert.equal(results[1]!.target, "init");
  assert.deepEqual(
    [...s.runtime.containers.values()].map((c) => c.metadata.name),
    ["init"],
  );
  const create = s.runtime.calls.indexOf("runPodSandbox");
  assert.ok(create >= 0 && create < s.runtime.calls.indexOf("createContainer"));
});

Deno.test("executePodActions() stops at a failed sandbox: one CreatePodSandboxError, no container calls", async () => {
  const s = setup();
  s.runtime.injectError("runPodSandbox", new Error("no network"));
  const results = await run(s, computePodActions(pod, empty));
  assert.equal(results.length, 1);
  assert.equal(results[0]!.reason, "CreatePodSandboxError");
  assert.match(results[0]!.message ?? "", /^Failed to create pod sandbox: /);
  assert.ok(!s.runtime.calls.includes("createContainer"));
});

Deno.test("executePodActions() kills a pod that needs no new sandbox and starts nothing", async () => {
  const s = setup();
  await run(s, computePodActions(pod, empty));
  const actions: PodActions = {
    killPod: true,
    createSandbox: false,
    sandboxId: "",
    attempt: 0,
    initContainersToStart: [0],
    containersToStart: [0],
    ephemeralContainersToStart: [],
    containersToKill: new Map(),
  };
  const before = s.runtime.calls.length;
  await run(s, actions);
  const after = s.runtime.calls.slice(before);
  assert.ok(!after.includes("createContainer"), after.join(","));
  assert.ok(!after.includes("runPodSandbox"), after.join(","));
});

Deno.test("executePodActions() starts an ephemeral container in the running sandbox, in its target's process namespace", async () => {
  const s = setup();
  const plain: Pod = { ...pod, spec: { containers: pod.spec.containers } };
  await executePodActions(s.deps, {
    pod: plain,
    status: empty,
    actions: computePodActions(plain, empty),
    signal: s.signal,
    logger: s.logger,
  });
  const configs: unknown[] = [];
  const create = s.runtime.createContainer.bind(s.runtime);
  s.runtime.createContainer = (req, opts) => {
    configs.push(req.config?.linux?.securityContext?.namespaceOptions);
    return create(req, opts);
  };
  const debug: Pod = {
    ...plain,
    spec: {
      ...plain.spec,
      ephemeralContainers: [
        { name: "debug", image: "busybox", targetContainerName: "app" },
        { name: "lost", image: "busybox", targetContainerName: "nope" },
      ],
    },
  };
  const status = await getPodRuntimeStatus(s.runtime, {
    uid: "u1",
    name: "web",
    namespace: "default",
  });
  const actions = computePodActions(debug, status);
  assert.deepEqual(actions.ephemeralContainersToStart, [0, 1]);
  const results = await executePodActions(s.deps, {
    pod: debug,
    status,
    actions,
    signal: s.signal,
    logger: s.logger,
  });
  assert.deepEqual(results.map((r) => [r.target, r.reason, r.message]), [
    ["debug", undefined, undefined],
    [
      "lost",
      "CreateContainerConfigError",
      "unable to find target container nope",
    ],
  ]);
  const app = status.containers.find((c) => c.name === "app")!;
  assert.deepEqual(configs, [{
    usernsOptions: { mode: 2 },
    network: 0,
    pid: 3,
    ipc: 0,
    targetId: app.id,
  }]);
  const after = await getPodRuntimeStatus(s.runtime, {
    uid: "u1",
    name: "web",
    namespace: "default",
  });
  assert.equal(
    after.containers.find((c) => c.name === "debug")?.state,
    "running",
  );
  assert.deepEqual(
    computePodActions(debug, after).ephemeralContainersToStart,
    [1],
  );
});

Deno.test("executePodActions() creates the sandbox under the RuntimeClass's handler", async () => {
  const s = setup();
  s.deps.runtimeHandlers = {
    lookupRuntimeHandler: (name) =>
      Promise.resolve(name === "plain" ? "runc" : ""),
  };
  const classed = { ...pod, spec: { ...pod.spec, runtimeClassName: "plain" } };
  const results = await executePodActions(s.deps, {
    pod: classed,
    status: empty,
    actions: computePodActions(classed, empty),
    signal: s.signal,
    logger: s.logger,
  });
  assert.equal(results[0]!.reason, undefined);
  assert.deepEqual(
    [...s.runtime.sandboxes.values()].map((b) => b.runtimeHandler),
    ["runc"],
  );
});

Deno.test("executePodActions() fails sandbox creation, before any CRI call, for a missing RuntimeClass or hostUsers false", async () => {
  for (
    const [spec, detail] of [
      [
        { runtimeClassName: "gvisor" },
        'runtimeclass.node.k8s.io "gvisor" not found',
      ],
      [
        { hostUsers: false },
        "can't set `spec.hostUsers: false`, runtime does not support user namespaces",
      ],
    ] as const
  ) {
    const s = setup();
    const events: string[] = [];
    s.deps.events = {
      event: (_ref, type, reason, message) =>
        void events.push(`${type} ${reason} ${message}`),
    } as NonNullable<ExecuteDeps["events"]>;
    s.deps.runtimeHandlers = {
      lookupRuntimeHandler: (name) =>
        name
          ? Promise.reject(
            new Error(`runtimeclass.node.k8s.io "${name}" not found`),
          )
          : Promise.resolve(""),
    };
    const bad = { ...pod, spec: { ...pod.spec, ...spec } } as Pod;
    const [started, errors] = usernsCounts();
    const results = await executePodActions(s.deps, {
      pod: bad,
      status: empty,
      actions: computePodActions(bad, empty),
      signal: s.signal,
      logger: s.logger,
    });
    assert.deepEqual(results, [{
      action: "CreatePodSandbox",
      target: "web",
      reason: "CreatePodSandboxError",
      message:
        `Failed to generate sandbox config for pod "web_default(u1)": ${detail}`,
    }]);
    assert.ok(!s.runtime.calls.includes("runPodSandbox"));
    // a refused hostUsers false pod counts as started and failed, as upstream's
    const userns = "hostUsers" in spec ? 1 : 0;
    assert.deepEqual(usernsCounts(), [started! + userns, errors! + userns]);
    assert.deepEqual(events, [
      `Warning FailedCreatePodSandBox Failed to create pod sandbox: ${detail}`,
    ]);
  }
});

Deno.test("executePodActions() fails sandbox creation, before any CRI call, for an FQDN over 64 bytes", async () => {
  const s = setup();
  const events: string[] = [];
  s.deps.events = {
    event: (_ref, type, reason, message) =>
      void events.push(`${type} ${reason} ${message}`),
  } as NonNullable<ExecuteDeps["events"]>;
  s.deps.dns = { clusterDNS: ["10.96.0.10"], clusterDomain: "cluster.local" };
  const long = {
    ...pod,
    spec: {
      ...pod.spec,
      hostname: "h".repeat(30),
      subdomain: "s".repeat(10),
      setHostnameAsFQDN: true,
    },
  } as Pod;
  const fqdn = `${"h".repeat(30)}.${"s".repeat(10)}.default.svc.cluster.local`;
  const detail =
    `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (64 characters is the max, 67 characters requested)`;
  const results = await executePodActions(s.deps, {
    pod: long,
    status: empty,
    actions: computePodActions(long, empty),
    signal: s.signal,
    logger: s.logger,
  });
  assert.deepEqual(results, [{
    action: "CreatePodSandbox",
    target: "web",
    reason: "CreatePodSandboxError",
    message:
      `Failed to generate sandbox config for pod "web_default(u1)": ${detail}`,
  }]);
  assert.ok(!s.runtime.calls.includes("runPodSandbox"));
  assert.deepEqual(events, [
    `Warning FailedCreatePodSandBox Failed to create pod sandbox: ${detail}`,
  ]);
});

Deno.test("executePodActions() gives a host-network pod's containers the node's IPs as status.podIP and status.podIPs", async () => {
  const s = setup();
  s.deps.start.hostIPs = ["192.168.0.10", "fd00::10"];
  const ipEnv = (name: string, fieldPath: string) => ({
    name,
    valueFrom: { fieldRef: { fieldPath } },
  });
  const host: Pod = {
    metadata: { name: "hostnet", namespace: "default", uid: "u2" },
    spec: {
      hostNetwork: true,
      containers: [{
        name: "app",
        image: "busybox",
        command: ["echo", "$(POD_IP)", "$(POD_IPS)", "$(HOST_IP)"],
        env: [
          ipEnv("POD_IP", "status.podIP"),
          ipEnv("POD_IPS", "status.podIPs"),
          ipEnv("HOST_IP", "status.hostIP"),
        ],
      }],
    },
  };
  const none: PodRuntimeStatus = { ...empty, uid: "u2", name: "hostnet" };
  const results = await executePodActions(s.deps, {
    pod: host,
    status: none,
    actions: computePodActions(host, none),
    signal: s.signal,
    logger: s.logger,
  });
  assert.deepEqual(results.map((r) => r.reason), [undefined, undefined]);
  const app = [...s.runtime.containers.values()][0]!;
  assert.deepEqual(app.command, [
    "echo",
    "192.168.0.10",
    "192.168.0.10,fd00::10",
    "192.168.0.10",
  ]);
});

Deno.test("executePodActions() runs a hostUsers false pod in its own user namespace: the sandbox, its containers and their mounts", async () => {
  const s = setup();
  const requests: Record<string, unknown[]> = {};
  // the same runtime, recording what the sandbox and the containers were created with
  const recording = new Proxy(s.runtime, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name !== "runPodSandbox" && name !== "createContainer") return value;
      return (request: unknown, options: unknown) => {
        (requests[name] ??= []).push(request);
        return value.call(target, request, options);
      };
    },
  });
  s.deps.runtime = recording;
  s.deps.start = { ...s.deps.start, runtime: recording };
  const files = new MemoryPodDirs();
  s.deps.userNamespaces = await createUserNamespaceManager({
    files,
    handlers: fixedHandlers([{ name: "", userNamespaces: true }]),
    logger: s.logger,
    random: () => 4,
  }, { gateEnabled: true, maxPods: 110 });
  const own = { ...pod, spec: { ...pod.spec, hostUsers: false } } as Pod;
  const [started, errors] = usernsCounts();
  const results = await executePodActions(s.deps, {
    pod: own,
    status: empty,
    actions: computePodActions(own, empty),
    signal: s.signal,
    logger: s.logger,
  });
  assert.deepEqual(results.map((r) => r.reason), [undefined, undefined]);
  assert.deepEqual(usernsCounts(), [started! + 1, errors]);
  // slot 4 of the default range: IDs from (4 + 1) * 65536
  const m = { hostId: 327680, containerId: 0, length: 65536 };
  const userns = { mode: 0, uids: [m], gids: [m] };
  type Sent = {
    config: {
      linux: {
        securityContext: { namespaceOptions: { usernsOptions: unknown } };
      };
      mounts?: { uidMappings?: unknown }[];
    };
  };
  const [sandbox] = requests.runPodSandbox as Sent[];
  assert.deepEqual(
    sandbox!.config.linux.securityContext.namespaceOptions.usernsOptions,
    userns,
  );
  const [container] = requests.createContainer as Sent[];
  assert.deepEqual(
    container!.config.linux.securityContext.namespaceOptions.usernsOptions,
    userns,
  );
  assert.ok(files.dirs.get("u1")?.includes('"hostId":327680'));
});
