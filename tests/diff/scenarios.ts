/**
 * Static pod scenarios that run the same way under kubelet.ts and the upstream kubelet.
 * A scenario drives one side through a small context; `short` ones run in CI, all of them in
 * `deno task diff`.
 */
import { lifecycle, type PodTrace } from "./normalize.ts";

export const IMAGE = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
  "kts.local/busybox:latest";

export interface ScenarioContext {
  node: string;
  write(file: string, manifest: unknown): Promise<void>;
  remove(file: string): Promise<void>;
  /** Stops the kubelet, runs `whileStopped`, starts it again (containers keep running). */
  restartKubelet(
    signal: "SIGTERM" | "SIGKILL",
    whileStopped?: () => Promise<void>,
  ): Promise<void>;
  /** Polls this side's pods (by `namespace/name`) until `done` holds. */
  waitFor(
    what: string,
    done: (pods: Map<string, PodTrace>) => boolean,
    timeoutMs?: number,
  ): Promise<void>;
  sleep(ms: number): Promise<void>;
  /** Snapshots this side's cgroup tree (tests/diff/cgroups.ts) to compare under `label`. */
  cgroups(label: string): Promise<void>;
  /** The control plane, in scenarios that join one (`api`). */
  api?: ApiContext;
}

/** A joined side's view of the control plane. */
export interface ApiContext {
  /** This side's namespace for API pods (named as its Node, masked as `<node>`). */
  namespace: string;
  kubectl(...args: string[]): Promise<string>;
  /** `kubectl get … -o json`; undefined when the object does not exist. */
  getJson<T = Record<string, unknown>>(
    ...args: string[]
  ): Promise<T | undefined>;
  /** `kubectl create` in this side's namespace. */
  create(object: unknown): Promise<void>;
  /** Keeps `value` (a view from normalize_api.ts) to compare with the other side's. */
  record(name: string, value: unknown): void;
}

export interface Scenario {
  name: string;
  /** Runs in CI (kept to well under a minute). */
  short: boolean;
  /** Both kubelets join the control plane, each as its own Node. */
  api?: boolean;
  /** KubeletConfiguration YAML lines both kubelets get. */
  config?: string[];
  run(ctx: ScenarioContext): Promise<void>;
}

interface ContainerSpec {
  name: string;
  command: string[];
  [key: string]: unknown;
}

/** A static pod manifest; containers run the busybox image from the local import. */
export function pod(
  name: string,
  containers: ContainerSpec[],
  spec: Record<string, unknown> = {},
): unknown {
  const withImage = (c: ContainerSpec) => ({
    image: IMAGE,
    imagePullPolicy: "IfNotPresent",
    ...c,
  });
  const { initContainers, ...rest } = spec as {
    initContainers?: ContainerSpec[];
  };
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: {
      terminationGracePeriodSeconds: 2,
      ...rest,
      ...(initContainers
        ? { initContainers: initContainers.map(withImage) }
        : {}),
      containers: containers.map(withImage),
    },
  };
}

export const sleeper = (name: string): ContainerSpec => ({
  name,
  command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"],
});

/** True when the pod's lifecycle so far contains every one of `steps` in order. */
export function reached(
  pods: Map<string, PodTrace>,
  key: string,
  steps: string[],
): boolean {
  const seen = lifecycle(pods.get(key)?.events ?? []);
  let i = 0;
  for (const s of seen) if (s === steps[i]) i++;
  return i === steps.length;
}

const key = (ctx: ScenarioContext, name: string) =>
  `default/${name}-${ctx.node}`;

/** Node allocatable, pod pids and reservations both kubelets enforce in the cgroup scenario. */
const CGROUP_CONFIG = [
  "kubeReserved:",
  "  cpu: 100m",
  "  memory: 100Mi",
  '  pid: "100"',
  "systemReserved:",
  "  cpu: 150m",
  "  memory: 50Mi",
  "enforceNodeAllocatable:",
  "  - pods",
  "podPidsLimit: 1024",
];

const requesting = (
  name: string,
  requests: unknown,
  limits?: unknown,
): ContainerSpec => ({
  ...sleeper(name),
  resources: { requests, ...(limits ? { limits } : {}) },
});

/** Waits until each named pod's `app` container has started. */
const appsStarted = (ctx: ScenarioContext, names: string[]) =>
  ctx.waitFor(
    "every app started",
    (p) => names.every((n) => reached(p, key(ctx, n), ["StartContainer app"])),
  );

/** Removes the named pods' manifests and waits until their sandboxes stopped. */
async function removeStopped(
  ctx: ScenarioContext,
  names: string[],
): Promise<void> {
  for (const n of names) await ctx.remove(`${n}.yaml`);
  await ctx.waitFor(
    "the sandboxes stopped",
    (p) => names.every((n) => reached(p, key(ctx, n), ["StopPodSandbox"])),
  );
}

/**
 * One pod per QoS class (a Burstable one with overhead and every limit, one with neither),
 * the cgroup tree compared while they run and again after the limited Burstable pod left.
 */
const cgroupScenario: Scenario = {
  name: "pod and QoS cgroups follow the pods",
  short: true,
  config: CGROUP_CONFIG,
  async run(ctx) {
    await ctx.write(
      "guaranteed.yaml",
      pod("guaranteed", [
        requesting("app", { cpu: "200m", memory: "64Mi" }, {
          cpu: "200m",
          memory: "64Mi",
        }),
      ]),
    );
    await ctx.write(
      "burstable.yaml",
      pod("burstable", [
        requesting("app", { cpu: "50m", memory: "32Mi" }, {
          cpu: "250m",
          memory: "128Mi",
        }),
        requesting("side", { cpu: "30m" }, { cpu: "70m", memory: "16Mi" }),
      ], { overhead: { cpu: "10m", memory: "8Mi" } }),
    );
    await ctx.write(
      "partial.yaml",
      pod("partial", [
        requesting("app", { cpu: "120m", memory: "16Mi" }),
        sleeper("plain"),
      ]),
    );
    await ctx.write("besteffort.yaml", pod("besteffort", [sleeper("app")]));
    await appsStarted(ctx, [
      "guaranteed",
      "burstable",
      "partial",
      "besteffort",
    ]);
    await ctx.sleep(3000);
    await ctx.cgroups("running");
    await removeStopped(ctx, ["burstable"]);
    // housekeeping (every 2 s on both) removes the pod's cgroup once it is cleaned up
    await ctx.sleep(8000);
    await ctx.cgroups("after removal");
    await removeStopped(ctx, ["guaranteed", "partial", "besteffort"]);
    await ctx.sleep(2000);
  },
};

/**
 * A pod whose manifest goes while the kubelet is down: after the restart its containers and
 * cgroup are orphans to clean up, and the tiers follow the pod that stays.
 */
const orphanScenario: Scenario = {
  name: "an orphaned pod's cgroup goes after a kubelet restart",
  short: false,
  config: CGROUP_CONFIG,
  async run(ctx) {
    await ctx.write(
      "stays.yaml",
      pod("stays", [requesting("app", { cpu: "80m" }, { cpu: "160m" })]),
    );
    await ctx.write(
      "orphan.yaml",
      pod("orphan", [requesting("app", { cpu: "40m", memory: "16Mi" })]),
    );
    await appsStarted(ctx, ["stays", "orphan"]);
    await ctx.sleep(2000);
    await ctx.restartKubelet("SIGKILL", () => ctx.remove("orphan.yaml"));
    await ctx.waitFor(
      "the orphan's sandbox stopped",
      (p) => reached(p, key(ctx, "orphan"), ["StopPodSandbox"]),
    );
    await ctx.sleep(8000);
    await ctx.cgroups("after restart");
    await removeStopped(ctx, ["stays"]);
    await ctx.sleep(2000);
  },
};

export const SCENARIOS: Scenario[] = [
  {
    name: "multi-container pod runs, then is removed",
    short: true,
    async run(ctx) {
      await ctx.write(
        "web.yaml",
        pod("web", [sleeper("app"), sleeper("side")]),
      );
      await ctx.waitFor(
        "both containers started",
        (p) =>
          reached(p, key(ctx, "web"), ["StartContainer app"]) &&
          reached(p, key(ctx, "web"), ["StartContainer side"]),
      );
      await ctx.sleep(3000);
      await ctx.remove("web.yaml");
      await ctx.waitFor(
        "the sandbox stopped",
        (p) => reached(p, key(ctx, "web"), ["StopPodSandbox"]),
      );
      await ctx.sleep(3000);
    },
  },
  {
    name: "init containers run in order before the app",
    short: true,
    async run(ctx) {
      await ctx.write(
        "init.yaml",
        pod("init", [sleeper("app")], {
          initContainers: [
            { name: "first", command: ["sh", "-c", "exit 0"] },
            { name: "second", command: ["sh", "-c", "exit 0"] },
          ],
        }),
      );
      await ctx.waitFor(
        "the app started",
        (p) => reached(p, key(ctx, "init"), ["StartContainer app"]),
      );
      await ctx.sleep(3000);
      await ctx.remove("init.yaml");
      await ctx.waitFor(
        "the sandbox stopped",
        (p) => reached(p, key(ctx, "init"), ["StopPodSandbox"]),
      );
      await ctx.sleep(2000);
    },
  },
  {
    name: "QoS classes, resources, DNS and host aliases reach the runtime",
    short: true,
    async run(ctx) {
      const resources = (requests: unknown, limits: unknown) => ({
        ...sleeper("app"),
        resources: { requests, limits },
      });
      await ctx.write(
        "guaranteed.yaml",
        pod("guaranteed", [
          resources({ cpu: "100m", memory: "64Mi" }, {
            cpu: "100m",
            memory: "64Mi",
          }),
        ]),
      );
      await ctx.write(
        "burstable.yaml",
        pod("burstable", [
          resources({ cpu: "50m", memory: "32Mi" }, {
            cpu: "250m",
            memory: "128Mi",
          }),
          sleeper("plain"),
        ]),
      );
      await ctx.write(
        "named.yaml",
        pod("named", [sleeper("app")], {
          hostname: "host-a",
          subdomain: "sub",
          hostAliases: [{ ip: "10.1.2.3", hostnames: ["alias.test"] }],
          dnsPolicy: "None",
          dnsConfig: {
            nameservers: ["10.0.0.10"],
            searches: ["example.test"],
            options: [{ name: "ndots", value: "2" }],
          },
        }),
      );
      const names = ["guaranteed", "burstable", "named"];
      await ctx.waitFor(
        "every app started",
        (p) =>
          names.every((n) => reached(p, key(ctx, n), ["StartContainer app"])),
      );
      await ctx.sleep(2000);
      for (const n of names) await ctx.remove(`${n}.yaml`);
      await ctx.waitFor(
        "the sandboxes stopped",
        (p) => names.every((n) => reached(p, key(ctx, n), ["StopPodSandbox"])),
      );
      await ctx.sleep(2000);
    },
  },
  {
    name: "restartPolicy Never and OnFailure run to completion",
    short: false,
    async run(ctx) {
      await ctx.write(
        "ok.yaml",
        pod("ok", [{ name: "job", command: ["sh", "-c", "exit 0"] }], {
          restartPolicy: "Never",
        }),
      );
      await ctx.write(
        "fail.yaml",
        pod("fail", [{ name: "job", command: ["sh", "-c", "exit 1"] }], {
          restartPolicy: "Never",
        }),
      );
      await ctx.write(
        "onfailure.yaml",
        pod("onfailure", [{ name: "job", command: ["sh", "-c", "exit 0"] }], {
          restartPolicy: "OnFailure",
        }),
      );
      await ctx.waitFor(
        "all three jobs started",
        (p) =>
          ["ok", "fail", "onfailure"].every((n) =>
            reached(p, key(ctx, n), ["StartContainer job"])
          ),
      );
      await ctx.sleep(8000);
    },
  },
  {
    name: "crash loop backs off",
    short: false,
    async run(ctx) {
      await ctx.write(
        "crash.yaml",
        pod("crash", [{ name: "app", command: ["sh", "-c", "exit 1"] }]),
      );
      await ctx.waitFor(
        "the first start",
        (p) => reached(p, key(ctx, "crash"), ["StartContainer app"]),
      );
      // Back-off 10 s, then 20 s: attempts 0, 1 and 2 within 35 s, not 3.
      await ctx.sleep(35_000);
    },
  },
  {
    name: "kubelet restart keeps running and completed pods",
    short: false,
    async run(ctx) {
      await ctx.write("keep.yaml", pod("keep", [sleeper("app")]));
      await ctx.write(
        "done.yaml",
        pod("done", [{ name: "job", command: ["sh", "-c", "exit 0"] }], {
          restartPolicy: "Never",
        }),
      );
      await ctx.waitFor(
        "both started",
        (p) =>
          reached(p, key(ctx, "keep"), ["StartContainer app"]) &&
          reached(p, key(ctx, "done"), ["StartContainer job"]),
      );
      await ctx.sleep(5000);
      await ctx.restartKubelet("SIGTERM");
      await ctx.sleep(10_000);
      await ctx.restartKubelet("SIGKILL");
      await ctx.sleep(10_000);
    },
  },
  {
    name:
      "manifest edit replaces the pod, removal stops it with its grace period",
    short: false,
    async run(ctx) {
      await ctx.write("edit.yaml", pod("edit", [sleeper("app")]));
      await ctx.waitFor(
        "the first start",
        (p) => reached(p, key(ctx, "edit"), ["StartContainer app"]),
      );
      await ctx.sleep(3000);
      await ctx.write(
        "edit.yaml",
        pod("edit", [sleeper("app")], { terminationGracePeriodSeconds: 5 }),
      );
      // upstream starts the edited pod only at a later sync (~10 s): wait for it either way
      await ctx.waitFor(
        "the edited pod started",
        (p) =>
          reached(p, key(ctx, "edit"), [
            "StartContainer app",
            "StopPodSandbox",
            "RunPodSandbox#0",
            "StartContainer app",
          ]),
        60_000,
      );
      await ctx.sleep(2000);
      await ctx.remove("edit.yaml");
      await ctx.waitFor(
        "the sandbox stopped",
        (p) =>
          reached(p, key(ctx, "edit"), [
            "StartContainer app",
            "StopPodSandbox",
            "RunPodSandbox#0",
            "StopPodSandbox",
          ]),
        60_000,
      );
      await ctx.sleep(2000);
    },
  },
  {
    name: "security context, sysctls and capabilities reach the runtime",
    short: true,
    async run(ctx) {
      await ctx.write(
        "secure.yaml",
        pod("secure", [{
          ...sleeper("locked"),
          securityContext: {
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["CHOWN"], add: ["NET_ADMIN"] },
            appArmorProfile: { type: "Unconfined" },
          },
        }, {
          ...sleeper("privileged"),
          securityContext: { privileged: true, runAsUser: 0 },
        }], {
          securityContext: {
            runAsUser: 1000,
            runAsGroup: 3000,
            fsGroup: 2000,
            supplementalGroups: [4000],
            seccompProfile: { type: "RuntimeDefault" },
            sysctls: [{
              name: "net.ipv4.ip_unprivileged_port_start",
              value: "0",
            }],
          },
        }),
      );
      await ctx.waitFor(
        "both containers started",
        (p) =>
          reached(p, key(ctx, "secure"), ["StartContainer locked"]) &&
          reached(p, key(ctx, "secure"), ["StartContainer privileged"]),
      );
      await ctx.sleep(2000);
      await ctx.remove("secure.yaml");
      await ctx.waitFor(
        "the sandbox stopped",
        (p) => reached(p, key(ctx, "secure"), ["StopPodSandbox"]),
      );
      await ctx.sleep(2000);
    },
  },
  {
    name: "volumes: emptyDir, hostPath, downwardAPI, readOnly, subPath",
    short: true,
    async run(ctx) {
      await ctx.write(
        "volumes.yaml",
        pod("volumes", [{
          ...sleeper("app"),
          volumeMounts: [
            { name: "scratch", mountPath: "/scratch" },
            { name: "scratch", mountPath: "/ro", readOnly: true },
            { name: "host", mountPath: "/host" },
            { name: "info", mountPath: "/info" },
            { name: "scratch", mountPath: "/sub", subPath: "a/b" },
          ],
        }], {
          volumes: [
            { name: "scratch", emptyDir: {} },
            {
              name: "host",
              hostPath: {
                path: `/tmp/kts-diff-volumes-${ctx.node}`,
                type: "DirectoryOrCreate",
              },
            },
            {
              name: "info",
              downwardAPI: {
                items: [{
                  path: "name",
                  fieldRef: { fieldPath: "metadata.name" },
                }],
              },
            },
          ],
        }),
      );
      await ctx.waitFor(
        "the app started",
        (p) => reached(p, key(ctx, "volumes"), ["StartContainer app"]),
      );
      await ctx.sleep(2000);
      await ctx.remove("volumes.yaml");
      await ctx.waitFor(
        "the sandbox stopped",
        (p) => reached(p, key(ctx, "volumes"), ["StopPodSandbox"]),
      );
      await ctx.sleep(2000);
    },
  },
  cgroupScenario,
  orphanScenario,
];
