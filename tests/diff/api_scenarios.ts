/**
 * Scenarios with both kubelets joined to the control plane, each as its own Node: pods from
 * the API server, what each kubelet writes back (pod status, mirror pods, events, the Node),
 * and a graceful delete. Each side works in its own namespace, named as its Node; the
 * comparison masks both names as `<node>`.
 */
import { conditionTrue, waitFor } from "../cluster/_cluster.ts";
import {
  eventsView,
  mirrorPodView,
  nodeView,
  podStatusView,
} from "./normalize_api.ts";
import {
  type ApiContext,
  pod,
  reached,
  type Scenario,
  type ScenarioContext,
  sleeper,
} from "./scenarios.ts";

type Obj = Record<string, unknown>;

const ready = (o: Obj | undefined) => conditionTrue(o, "Ready");

/** Polls until the object is gone. */
async function gone(api: ApiContext, what: string, ...args: string[]) {
  await waitFor(
    `${what} to disappear`,
    async () => (await api.getJson(...args)) === undefined ? true : undefined,
    60_000,
  );
}

/** The pod `name` on this side's Node, created through the API server. */
function apiPod(ctx: ScenarioContext, name: string, spec: Obj): Obj {
  const p = pod(name, [{
    ...sleeper("app"),
    env: [
      {
        name: "FROM_CONFIGMAP",
        valueFrom: { configMapKeyRef: { name: "settings", key: "color" } },
      },
      {
        name: "FROM_SECRET",
        valueFrom: { secretKeyRef: { name: "creds", key: "user" } },
      },
      {
        name: "OPTIONAL_MISSING",
        valueFrom: {
          configMapKeyRef: { name: "absent", key: "x", optional: true },
        },
      },
      {
        name: "POD_NAME",
        valueFrom: { fieldRef: { fieldPath: "metadata.name" } },
      },
      { name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
      {
        name: "HOST_IP",
        valueFrom: { fieldRef: { fieldPath: "status.hostIP" } },
      },
      {
        name: "SA",
        valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } },
      },
    ],
    envFrom: [
      { prefix: "CM_", configMapRef: { name: "settings" } },
      { secretRef: { name: "creds" } },
    ],
    volumeMounts: [
      { name: "config", mountPath: "/etc/config" },
      { name: "secret", mountPath: "/etc/secret", readOnly: true },
      { name: "token", mountPath: "/var/run/diff" },
      { name: "info", mountPath: "/etc/info" },
    ],
  }], spec) as { metadata: Obj; spec: Obj };
  return {
    ...p,
    metadata: { name, labels: { app: name, tier: "diff" } },
    spec: { ...p.spec, nodeName: ctx.node },
  };
}

const VOLUMES = [
  { name: "config", configMap: { name: "settings" } },
  { name: "secret", secret: { secretName: "creds", defaultMode: 0o400 } },
  {
    name: "token",
    projected: {
      sources: [
        {
          serviceAccountToken: {
            path: "token",
            audience: "diff",
            expirationSeconds: 3600,
          },
        },
        {
          configMap: {
            name: "settings",
            items: [{ key: "color", path: "color" }],
          },
        },
        {
          downwardAPI: {
            items: [{
              path: "labels",
              fieldRef: { fieldPath: "metadata.labels" },
            }],
          },
        },
      ],
    },
  },
  {
    name: "info",
    downwardAPI: {
      items: [
        { path: "name", fieldRef: { fieldPath: "metadata.name" } },
        { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
      ],
    },
  },
];

async function createObjects(api: ApiContext): Promise<void> {
  await api.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings" },
    data: { color: "blue", "app.conf": "level=1\n" },
  });
  await api.create({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "creds" },
    stringData: { user: "admin", password: "hunter2" },
  });
}

export const API_SCENARIOS: Scenario[] = [
  {
    name:
      "API pod with configMap, secret, token and downwardAPI volumes and env: status, graceful delete",
    short: true,
    api: true,
    async run(ctx) {
      const api = ctx.api!;
      const ns = api.namespace;
      await createObjects(api);
      await api.create(apiPod(ctx, "web", { volumes: VOLUMES }));
      const key = `${ns}/web`;
      await ctx.waitFor(
        "the app started",
        (p) => reached(p, key, ["StartContainer app"]),
      );
      const running = await waitFor("the pod to turn Ready", async () => {
        const p = await api.getJson("pod", "web", "-n", ns);
        return ready(p) ? p : undefined;
      });
      api.record("status web", podStatusView(running));
      await api.kubectl("delete", "pod", "web", "-n", ns, "--wait=false");
      await ctx.waitFor(
        "the sandbox stopped",
        (p) => reached(p, key, ["StopPodSandbox"]),
      );
      await gone(api, "the pod", "pod", "web", "-n", ns);
      // the event recorders send in batches
      await ctx.sleep(1500);
      api.record(
        "events web",
        eventsView(await api.getJson("events", "-n", ns), ["web"]),
      );
    },
  },
  {
    name: "static pod's mirror pod, events and the Node",
    short: false,
    api: true,
    async run(ctx) {
      const api = ctx.api!;
      const mirror = `mirrored-${ctx.node}`;
      await ctx.write("mirrored.yaml", pod("mirrored", [sleeper("app")]));
      await ctx.waitFor(
        "the app started",
        (p) => reached(p, `default/${mirror}`, ["StartContainer app"]),
      );
      const m = await waitFor("the mirror pod to turn Ready", async () => {
        const p = await api.getJson("pod", mirror, "-n", "default");
        return ready(p) ? p : undefined;
      });
      api.record("mirror pod", mirrorPodView(m));
      api.record("status mirror pod", podStatusView(m));
      const node = await waitFor("the Node Ready and untainted", async () => {
        const n = await api.getJson("node", ctx.node);
        const taints = (n?.spec as { taints?: unknown[] } | undefined)?.taints;
        return ready(n) && !taints?.length ? n : undefined;
      });
      api.record("node", nodeView(node));
      await ctx.remove("mirrored.yaml");
      await ctx.waitFor(
        "the sandbox stopped",
        (p) => reached(p, `default/${mirror}`, ["StopPodSandbox"]),
      );
      await gone(api, "the mirror pod", "pod", mirror, "-n", "default");
      await ctx.sleep(1500);
      api.record(
        "events",
        eventsView(await api.getJson("events", "-n", "default"), [
          mirror,
          ctx.node,
        ]),
      );
    },
  },
];
