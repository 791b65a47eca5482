/**
 * A live binary swap (docs/swap.md): one node, one root dir, one cert dir, one runtime-only
 * containerd, joined to the control plane, moved upstream kubelet → kubelet.ts → upstream
 * kubelet with `scripts/swap.sh`. Each kubelet runs past one container GC pass (1 min) before
 * the runtime is compared, so a GC that removes what the other kubelet kept shows as a change.
 *
 * Asserted in each direction, each in its own step: the containers and sandboxes of the API
 * pods and of the static pods are the same objects in the same states (none created, removed,
 * stopped; completed pods not run again), no container restarted, the running pods are Ready,
 * and the Node is Ready throughout; at the end the client certificate is still upstream's
 * symlink. Needs root, the peers (scripts/peers.sh) and the control plane
 * (scripts/cluster_env.sh); skips, saying which, without them.
 */
import assert from "node:assert/strict";
import { type RuntimeEntry } from "./_swap.ts";
import { changedPods, parseSnapshot } from "./_swap.ts";
import {
  cluster,
  clusterMissing,
  CRI_IMAGE,
  deleteNode,
  getJson,
  kubectl,
  run,
  waitFor,
} from "./_cluster.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

function missing(): string | undefined {
  if (clusterMissing) return clusterMissing;
  if (Deno.build.os !== "linux" || Deno.uid() !== 0) {
    return "needs root on Linux (a kubelet and a containerd)";
  }
  try {
    Deno.statSync(`${cluster.bin}/kubelet`);
    Deno.statSync(`${cluster.bin}/crictl`);
  } catch {
    return `no upstream kubelet or crictl in ${cluster.bin}: run \`bash scripts/peers.sh build\``;
  }
  return undefined;
}

const skip = missing();
// deno-lint-ignore no-console
if (skip) console.log(`skipping the swap e2e: ${skip}`);

/** How long each kubelet runs before the runtime is compared: past one container GC pass. */
const GC_PASS_MS = 75_000;

interface PodJson {
  metadata: { name: string; uid: string; annotations?: Record<string, string> };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; restartCount: number }[];
    initContainerStatuses?: { name: string; restartCount: number }[];
  };
}

interface NodeJson {
  status: {
    conditions: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
    }[];
  };
}

function container(
  name: string,
  script: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name,
    image: CRI_IMAGE,
    imagePullPolicy: "IfNotPresent",
    command: ["sh", "-c", script],
    ...extra,
  };
}

/** The four static pods and the API pods of the test, in namespace `ns` on node `node`. */
function pods(ns: string, node: string) {
  const pod = (
    name: string,
    spec: Record<string, unknown>,
    api: boolean,
  ) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns },
    spec: {
      ...(api ? { nodeName: node, automountServiceAccountToken: false } : {}),
      terminationGracePeriodSeconds: 1,
      enableServiceLinks: false,
      ...spec,
    },
  });
  const running = (name: string, api: boolean) =>
    pod(name, {
      containers: [container("main", "exec sleep 100000")],
    }, api);
  const done = (name: string, api: boolean) =>
    pod(name, {
      restartPolicy: "Never",
      containers: [container("once", "echo ran once")],
    }, api);
  const init = (name: string, api: boolean) =>
    pod(name, {
      // a service account token too: a projected volume, a tmpfs under upstream
      ...(api ? { automountServiceAccountToken: true } : {}),
      initContainers: [
        container("init", "echo init > /data/init", {
          volumeMounts: [{ name: "data", mountPath: "/data" }],
        }),
      ],
      containers: [
        container("main", "exec sleep 100000", {
          volumeMounts: [{ name: "data", mountPath: "/data" }],
        }),
      ],
      volumes: [{ name: "data", emptyDir: {} }],
    }, api);
  const probed = (name: string, api: boolean) =>
    pod(name, {
      containers: [
        container("main", "touch /tmp/ready; exec sleep 100000", {
          startupProbe: {
            exec: { command: ["cat", "/tmp/ready"] },
            periodSeconds: 1,
          },
          readinessProbe: {
            exec: { command: ["cat", "/tmp/ready"] },
            periodSeconds: 2,
          },
          livenessProbe: { exec: { command: ["true"] }, periodSeconds: 5 },
        }),
      ],
    }, api);
  return {
    static: {
      "st-run.json": running("st-run", false),
      "st-done.json": done("st-done", false),
      "st-init.json": init("st-init", false),
      "st-probe.json": probed("st-probe", false),
    },
    api: [
      running("api-run", true),
      done("api-done", true),
      init("api-init", true),
      probed("api-probe", true),
    ],
    /** Created while kubelet.ts runs: the upstream kubelet must take over a pod it never saw. */
    late: running("api-late", true),
  };
}

/** The mirror pod names of the static pods (`<name>-<node>`). */
const STATIC = ["st-run", "st-done", "st-init", "st-probe"];
const API = ["api-run", "api-done", "api-init", "api-probe"];
const COMPLETED = new Set(["st-done", "api-done"]);

Deno.test({
  name: "swap: upstream kubelet → kubelet.ts → upstream kubelet on one node",
  ignore: skip !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const id = crypto.randomUUID().slice(0, 6);
    const node = `kts-swap-${id}`;
    const root = `/tmp/kts-swap-e2e-${id}`;
    const env = {
      KTS_UPSTREAM_ROOT: root,
      KTS_UPSTREAM_NODE: node,
      KTS_UPSTREAM_BRIDGE: "kth4",
      KTS_UPSTREAM_SUBNET: "10.104.0.0/16",
      KTS_UPSTREAM_HEALTHZ_PORT: "12420",
      KTS_UPSTREAM_PORT: "12421",
      // a private log dir: another kubelet's container GC removes log dirs of pods it
      // does not know from a shared /var/log/pods
      KTS_UPSTREAM_CONFIG_EXTRA: `podLogsDir: ${root}/pod-logs`,
      KUBELET_TS_BOOTSTRAP_KUBECONFIG: cluster.bootstrapKubeconfig,
      KUBELET_TS_CLUSTER_CA: cluster.ca,
      KTS_SWAP_SETTLE: "0",
    };
    const swap = async (command: string) => {
      const r = await run("bash", [`${ROOT}scripts/swap.sh`, command], env);
      if (r.code !== 0) {
        throw new Error(`scripts/swap.sh ${command} failed:\n${r.stderr}`);
      }
      return r;
    };
    const snapshot = async () => parseSnapshot((await swap("snapshot")).stdout);
    const ns = node;
    const all = pods(ns, node);
    const mirror = (name: string) => `${name}-${node}`;
    const podNames = [...STATIC.map(mirror), ...API];
    const podJson = async (name: string) =>
      await getJson<PodJson>("pod", "-n", ns, name);

    /** Every pod is where it belongs: running ones Ready, completed ones Succeeded. */
    const settled = async (names: string[]) =>
      await waitFor(`pods ${names.join(", ")} settled`, async () => {
        for (const name of names) {
          const p = await podJson(name);
          const done = COMPLETED.has(name.replace(`-${node}`, ""));
          const ok = done
            ? p?.status?.phase === "Succeeded"
            : p?.status?.conditions?.some((c) =>
              c.type === "Ready" && c.status === "True"
            );
          if (!ok) return undefined;
        }
        return true;
      }, 180_000);

    // Node Ready is sampled every second from the first swap on: phase → NotReady reasons.
    const notReady: { phase: string; why: string }[] = [];
    let phase = "upstream";
    let sampling = false;
    let sampler: Promise<void> | undefined;
    const sample = async () => {
      while (sampling) {
        const n = await getJson<NodeJson>("node", node).catch(() => undefined);
        const ready = n?.status.conditions.find((c) => c.type === "Ready");
        if (ready && ready.status !== "True") {
          notReady.push({
            phase,
            why: `${ready.status} ${ready.reason}: ${ready.message}`,
          });
        }
        await new Promise((r) => setTimeout(r, 1_000));
      }
    };

    const comparePods = (
      before: RuntimeEntry[],
      after: RuntimeEntry[],
      names: string[],
      direction: string,
      uids?: Record<string, Record<string, unknown>>,
    ) => {
      const changes = changedPods(
        before,
        after,
        names.map((n) => `${ns}/${n}`),
      );
      const mine = (e: RuntimeEntry) =>
        names.some((n) => e.pod === `${ns}/${n}`);
      const list = (es: RuntimeEntry[]) =>
        es.filter(mine).map((e) =>
          `  ${e.kind} ${e.id} ${e.state} ${
            e.pod.slice(ns.length + 1)
          } ${e.name}`
        ).join("\n");
      // deno-lint-ignore no-console
      console.log(
        `${direction}\nbefore:\n${list(before)}\nafter:\n${
          list(after)
        }\nchanged: ${JSON.stringify(changes)}`,
      );
      // static pods: with different UIDs the new kubelet takes the old pods for other ones,
      // stops them and starts its own
      const [a, b] = Object.values(uids ?? {});
      const why = JSON.stringify(a) === JSON.stringify(b)
        ? ""
        : `, because the static pod UIDs differ: ${JSON.stringify(uids)}`;
      assert.deepEqual(changes, [], `${direction}: containers changed${why}`);
    };

    /** The static pods' UIDs as the running kubelet reports them (mirror pod config hash). */
    const staticUids = async () =>
      Object.fromEntries(
        await Promise.all(
          STATIC.map(async (s) => [
            s,
            (await podJson(mirror(s)))?.metadata.annotations
              ?.["kubernetes.io/config.mirror"],
          ]),
        ),
      );

    try {
      await kubectl("create", "namespace", ns);
      await Deno.mkdir(`${root}/manifests`, { recursive: true });
      for (const [file, manifest] of Object.entries(all.static)) {
        await Deno.writeTextFile(
          `${root}/manifests/${file}`,
          JSON.stringify(manifest),
        );
      }
      await swap("up");
      const file = await Deno.makeTempFile({ suffix: ".json" });
      await Deno.writeTextFile(
        file,
        JSON.stringify({ apiVersion: "v1", kind: "List", items: all.api }),
      );
      await kubectl("create", "-f", file);
      await settled(podNames);
      const upstreamUids = await staticUids();
      const onUpstream = await snapshot();
      sampling = true;
      sampler = sample();

      await swap("to-ts");
      phase = "kubelet.ts";
      await new Promise((r) => setTimeout(r, GC_PASS_MS));
      await settled(podNames);
      const oursUids = await staticUids();
      const onOurs = await snapshot();

      await t.step(
        "upstream → kubelet.ts: API pods keep their containers and sandboxes",
        () =>
          comparePods(
            onUpstream,
            onOurs,
            API,
            "upstream → kubelet.ts (API pods)",
          ),
      );
      await t.step(
        "upstream → kubelet.ts: static pods keep their containers and sandboxes (needs kubelet.ts's static pod UID to be upstream's)",
        () =>
          comparePods(
            onUpstream,
            onOurs,
            STATIC.map(mirror),
            "upstream → kubelet.ts (static pods)",
            { upstream: upstreamUids, "kubelet.ts": oursUids },
          ),
      );

      await Deno.writeTextFile(file, JSON.stringify(all.late));
      await kubectl("create", "-f", file);
      await Deno.remove(file);
      await settled([...podNames, "api-late"]);
      const beforeBack = await snapshot();

      await swap("to-upstream");
      phase = "upstream again";
      await new Promise((r) => setTimeout(r, GC_PASS_MS));
      await settled([...podNames, "api-late"]);
      const back = await snapshot();
      const backUids = await staticUids();
      sampling = false;
      await sampler;

      await t.step(
        "kubelet.ts → upstream: API pods keep their containers and sandboxes",
        () =>
          comparePods(
            beforeBack,
            back,
            [...API, "api-late"],
            "kubelet.ts → upstream (API pods)",
          ),
      );
      await t.step(
        "kubelet.ts → upstream: static pods keep their containers and sandboxes (needs kubelet.ts's static pod UID to be upstream's)",
        () =>
          comparePods(
            beforeBack,
            back,
            STATIC.map(mirror),
            "kubelet.ts → upstream (static pods)",
            { "kubelet.ts": oursUids, upstream: backUids },
          ),
      );
      await t.step("no container restarted", async () => {
        for (const name of [...API, "api-late"]) {
          const p = await podJson(name);
          const counts = [
            ...p?.status?.containerStatuses ?? [],
            ...p?.status?.initContainerStatuses ?? [],
          ].map((c) => `${c.name}=${c.restartCount}`);
          assert.ok(counts.length > 0, `${name} has container statuses`);
          for (const c of counts) {
            assert.match(c, /=0$/, `${name}: ${c} restarts`);
          }
        }
      });
      await t.step(
        "every API pod keeps its directory, hosts file and log files",
        async () => {
          for (const name of [...API, "api-late"]) {
            const p = await podJson(name);
            const uid = p!.metadata.uid;
            await Deno.stat(`${root}/root/pods/${uid}/etc-hosts`);
            for (
              const c of [
                ...p?.status?.containerStatuses ?? [],
                ...p?.status?.initContainerStatuses ?? [],
              ]
            ) {
              await Deno.stat(
                `${root}/pod-logs/${ns}_${name}_${uid}/${c.name}/0.log`,
              );
            }
          }
        },
      );
      await t.step(
        "the Node stayed Ready but for the start-up report both kubelets make",
        () => {
          // deno-lint-ignore no-console
          console.log(`Node not Ready samples: ${JSON.stringify(notReady)}`);
          // a starting kubelet (either) reports NotReady until its first runtime status
          // check and PLEG relist (upstream setNodeReadyCondition); nothing else may show
          const startUp =
            /^False KubeletNotReady: (\[?(container runtime status check may not have completed yet|PLEG is not healthy: pleg has yet to be successful)(, )?)+\]?$/;
          for (const { phase, why } of notReady) {
            assert.match(why, startUp, `the Node under ${phase}`);
          }
        },
      );
      await t.step(
        "the client certificate is still the upstream kubelet's symlink",
        async () => {
          const current = await Deno.lstat(
            `${root}/pki/kubelet-client-current.pem`,
          );
          assert.ok(current.isSymlink, "kubelet-client-current.pem");
        },
      );
    } finally {
      sampling = false;
      await sampler;
      await swap("down").catch(() => {});
      await kubectl("delete", "namespace", ns, "--wait=false").catch(() => {});
      await deleteNode(node);
    }
  },
});
