/**
 * Faults of the control plane on real containerd, on a control plane of the test's own (a second
 * instance of scripts/cluster_env.sh under a temporary root with free ports: the shared one
 * stays up for the tests running next to this one).
 *
 * kubelet.ts joins with a 10 s lease (renewed every 2.5 s) and its status reported every 5 s, and
 * runs a pod. Then:
 * - the API server is stopped for KTS_FAULT_OUTAGE_SECONDS (default 30; the figure is
 *   120): no container is killed or restarted (same CRI container IDs, all running, attempt 0),
 *   and after the API server is back the Lease renewTime and the Node's Ready heartbeat move
 *   within 20 s, and a pod created afterwards runs (the pod watch resumed);
 * - etcd is restarted: the same.
 * At the end the control plane is taken down and its root removed; nothing of it keeps running.
 */
import assert from "node:assert/strict";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import { freePort, freePortPair } from "../server/_helpers.ts";
import { startApiKubelet } from "./_api_kubelet.ts";
import {
  cluster,
  clusterMissing,
  conditionTrue,
  type ControlPlane,
  CRI_ENDPOINT,
  CRI_IMAGE,
  kubectlOn,
  script,
  waitFor,
} from "./_cluster.ts";

const OUTAGE_S = Number(Deno.env.get("KTS_FAULT_OUTAGE_SECONDS") ?? "30");
const RESUME_WITHIN_MS = 20_000;

const missing = clusterMissing ??
  (CRI_ENDPOINT
    ? undefined
    : "no containerd: run `bash scripts/cri_env.sh up` and source /tmp/cri.env");
// deno-lint-ignore no-console
if (missing) console.log(`skipping api_faults_test: ${missing}`);

interface Lease {
  spec: { renewTime?: string };
}
interface NodeJson {
  status: {
    conditions: { type: string; status: string; lastHeartbeatTime: string }[];
  };
}
interface PodJson {
  status?: {
    phase?: string;
    containerStatuses?: { restartCount: number; containerID?: string }[];
  };
}

function pod(name: string, ns: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns },
    spec: {
      nodeName: ns,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: "main",
        image: CRI_IMAGE,
        imagePullPolicy: "IfNotPresent",
        command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"],
      }],
    },
  });
}

Deno.test({
  name:
    "API server down and etcd restarted: no container is touched, Lease and Node status resume within 20 s, the pod watch resumes",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const root = await Deno.makeTempDir({ prefix: "kts-h10-faults-" });
    const env = {
      KTS_CLUSTER_ROOT: root,
      KTS_CLUSTER_PORT: String(freePort()),
      // etcd takes this port and the next one (peers)
      // etcd takes the next port too, for its peers
      KTS_CLUSTER_ETCD_PORT: String(freePortPair()),
      KTS_CLUSTER_KCM_PORT: String(freePort()),
      KTS_CLUSTER_SCHEDULER_PORT: String(freePort()),
    };
    const ctl = (cmd: string) => script("cluster_env.sh", [cmd], env);
    let k: Awaited<ReturnType<typeof startApiKubelet>> | undefined;
    try {
      const up = Date.now();
      const vars = await ctl("up");
      const upMs = Date.now() - up;
      const plane: ControlPlane = {
        kubeconfig: vars.KUBELET_TS_KUBECONFIG!,
        bootstrapKubeconfig: vars.KUBELET_TS_BOOTSTRAP_KUBECONFIG!,
        ca: vars.KUBELET_TS_CLUSTER_CA!,
        bin: vars.KUBELET_TS_K8S_BIN || cluster.bin,
      };
      const { kubectl, getJson } = kubectlOn(plane);
      k = await startApiKubelet("h10-fault", {
        criEndpoint: CRI_ENDPOINT,
        plane,
        nodeIP: "127.0.0.1",
        config: {
          nodeLeaseDurationSeconds: 10,
          nodeStatusUpdateFrequency: "2s",
          nodeStatusReportFrequency: "5s",
        },
      });
      const { node, runtime } = k;
      const apply = async (manifest: string) => {
        const file = await Deno.makeTempFile({ suffix: ".json" });
        await Deno.writeTextFile(file, manifest);
        await kubectl("apply", "-f", file).finally(() => Deno.remove(file));
      };
      const runningPod = (name: string) =>
        waitFor(`pod ${name} Running`, async () => {
          const p = await getJson<PodJson>("pod", "-n", node, name);
          return p?.status?.phase === "Running" ? p : undefined;
        }, 60_000);
      /** The test's containers as CRI reports them: id → "state/attempt". */
      const containers = async () => {
        const { containers } = await runtime.listContainers({
          filter: { labelSelector: { "io.kubernetes.pod.namespace": node } },
        });
        return Object.fromEntries(
          containers.map((c) => [c.id, `${c.state}/${c.metadata?.attempt}`]),
        );
      };
      const renewTime = async () =>
        Date.parse(
          (await getJson<Lease>("lease", "-n", "kube-node-lease", node))
            ?.spec.renewTime ?? "",
        );
      const heartbeat = async () => {
        const n = await getJson<NodeJson>("node", node);
        const ready = n?.status.conditions.find((c) => c.type === "Ready");
        return ready?.status === "True"
          ? Date.parse(ready.lastHeartbeatTime)
          : NaN;
      };
      /** Both heartbeats newer than `since`; returns how long that took. */
      const resumed = async (since: number) => {
        await waitFor(
          "the Lease renewed",
          async () => (await renewTime()) >= since || undefined,
          60_000,
        );
        const leaseMs = Date.now() - since;
        // lastHeartbeatTime has whole seconds
        await waitFor(
          "the Node's Ready heartbeat",
          async () => (await heartbeat()) >= since - 1_000 || undefined,
          60_000,
        );
        return { leaseMs, statusMs: Date.now() - since };
      };

      await apply(pod("steady", node));
      await runningPod("steady");
      const before = await containers();
      assert.equal(Object.keys(before).length, 1, JSON.stringify(before));
      // CRI CONTAINER_RUNNING is 1; attempt 0 = never restarted
      assert.deepEqual(Object.values(before), ["1/0"]);
      const results: string[] = [`control plane up ${upMs} ms`];

      await t.step(`the API server stopped for ${OUTAGE_S} s`, async () => {
        await ctl("stop-apiserver");
        await new Promise((r) => setTimeout(r, OUTAGE_S * 1_000));
        assert.deepEqual(await containers(), before, "a container changed");
        await ctl("start-apiserver");
        const back = Date.now();
        const r = await resumed(back);
        assert.ok(r.leaseMs < RESUME_WITHIN_MS, `lease after ${r.leaseMs} ms`);
        assert.ok(
          r.statusMs < RESUME_WITHIN_MS,
          `status after ${r.statusMs} ms`,
        );
        // the pod watch resumed: a pod created now runs
        await apply(pod("after-apiserver", node));
        await runningPod("after-apiserver");
        const podMs = Date.now() - back;
        results.push(
          `API server down ${OUTAGE_S} s: lease +${r.leaseMs} ms, status +${r.statusMs} ms, new pod Running +${podMs} ms`,
        );
      });

      await t.step("etcd restarted", async () => {
        const steady = await containers();
        await ctl("restart-etcd");
        const back = Date.now();
        const r = await resumed(back);
        assert.ok(r.leaseMs < RESUME_WITHIN_MS, `lease after ${r.leaseMs} ms`);
        assert.ok(
          r.statusMs < RESUME_WITHIN_MS,
          `status after ${r.statusMs} ms`,
        );
        assert.deepEqual(await containers(), steady, "a container changed");
        await apply(pod("after-etcd", node));
        await runningPod("after-etcd");
        results.push(
          `etcd restarted: lease +${r.leaseMs} ms, status +${r.statusMs} ms, new pod Running +${
            Date.now() - back
          } ms`,
        );
      });

      // the first pod's container was never restarted, as the API server saw it too
      const steady = await getJson<PodJson>("pod", "-n", node, "steady");
      assert.equal(steady?.status?.containerStatuses?.[0]?.restartCount, 0);
      assert.equal(
        steady?.status?.containerStatuses?.[0]?.containerID,
        `containerd://${Object.keys(before)[0]}`,
      );
      assert.ok(conditionTrue(await getJson("node", node), "Ready"));
      // deno-lint-ignore no-console
      console.log(`api faults: ${results.join("; ")}`);
    } finally {
      await k?.stop();
      await ctl("down").catch(() => {});
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
    // nothing of the instance is left running
    const left: string[] = [];
    for await (const e of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(e.name)) continue;
      const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`)
        .catch(() => "");
      if (cmd.includes(root)) left.push(e.name);
    }
    assert.deepEqual(left, [], "processes of the test's control plane remain");
    if (k) {
      const sandboxes = await listSandboxes(k.node);
      assert.deepEqual(sandboxes, [], "sandboxes remain");
      const mounts = (await Deno.readTextFile("/proc/self/mounts")).split("\n")
        .filter((m) => m.includes(k!.dir) || m.includes(root));
      assert.deepEqual(mounts, [], "mounts remain");
      assert.equal(await exists(k.dir), false, "the kubelet's files remain");
    }
    assert.equal(await exists(root), false, "the control plane's root remains");
  },
});

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** The test's sandboxes still in containerd (through a fresh client: the kubelet's is closed). */
async function listSandboxes(ns: string): Promise<string[]> {
  const runtime = createCriRuntime({
    endpoint: CRI_ENDPOINT,
    timeoutMs: 10_000,
  });
  try {
    const { items } = await runtime.listPodSandbox({});
    return items.filter((s) => s.metadata?.namespace === ns).map((s) => s.id);
  } finally {
    await runtime.close();
  }
}
