/**
 * `kubectl top node` and `kubectl top pod` through metrics-server (built from its Go module,
 * scripts/peers.sh metrics-server, deployed as upstream's manifest deploys it) for an upstream
 * node and a kubelet.ts node running the same pods: one busy-looping, one idle. Both nodes
 * must show figures (a node without `node_cpu_usage_seconds_total` shows `<unknown>`), and
 * on each node the busy pod must use more CPU than the idle one. The metric families of
 * `/metrics/resource` and `/metrics/cadvisor` of the two kubelets are compared too. Waits for
 * values, never for a time. Needs root, the control plane (scripts/cluster_env.sh), the peers
 * and metrics-server (bash scripts/peers.sh build; bash scripts/peers.sh metrics-server) and
 * the local registry (scripts/cri_env.sh up); skips otherwise.
 */
import assert from "node:assert/strict";
import {
  type KubeletKind,
  type Node,
  type NodeSpec,
  startNode,
} from "../conformance/node.ts";
import {
  cluster,
  clusterMissing,
  conditionTrue,
  CRI_IMAGE,
  deleteNode,
  getJson,
  kubectl,
  run,
  waitFor,
} from "./_cluster.ts";
import { metricsServerManifest } from "./_metrics_server.ts";
import { familyLabels, parseTopNodes, parseTopPods } from "./_kubectl_top.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const KINDS: KubeletKind[] = ["upstream", "ours"];
const NS = "kts-top";
const METRICS_SERVER_PORT = 17610;

/** Subnets 10.148 and 10.149, ports 176xx and names of this test alone. */
const SPECS: Record<KubeletKind, NodeSpec> = {
  upstream: {
    node: "kts-mt-upstream",
    bridge: "kmtu",
    subnet: "10.149.0.0/16",
    ip: "10.149.0.1",
    port: 17650,
    healthz: 17648,
  },
  ours: {
    node: "kts-mt-ours",
    bridge: "kmt0",
    subnet: "10.148.0.0/16",
    ip: "10.148.0.1",
    port: 17660,
    healthz: 17658,
  },
};
const ROOTS: Record<KubeletKind, string> = {
  upstream: "/tmp/kts-cri-mtu",
  ours: "/tmp/kts-cri-mt",
};

async function prerequisitesMissing(): Promise<string | undefined> {
  if (clusterMissing) return clusterMissing;
  if (Deno.uid() !== 0) return "needs root (containerd and the kubelets)";
  const peers = await run("bash", [`${ROOT}/scripts/peers.sh`, "dir"]);
  if (peers.code !== 0) {
    return "the upstream kubelet is not built: run bash scripts/peers.sh build";
  }
  return undefined;
}

const missing = await prerequisitesMissing();
if (missing) {
  // deno-lint-ignore no-console
  console.warn(`tests/cluster/kubectl_top_test.ts skipped: ${missing}`);
}

/** The metrics-server binary; without it only the metric families are compared. */
const metricsServer = missing ? undefined : await (async () => {
  const r = await run("bash", [
    `${ROOT}/scripts/peers.sh`,
    "metrics-server-path",
  ]);
  if (r.code === 0) return r.stdout.trim();
  // deno-lint-ignore no-console
  console.warn(
    "tests/cluster/kubectl_top_test.ts: kubectl top skipped: metrics-server is not built (bash scripts/peers.sh metrics-server)",
  );
  return undefined;
})();

/** The kubelet's port from `--kubeconfig`'s API server, for the manifest's env. */
async function apiServerPort(): Promise<number> {
  const text = await kubectl("config", "view", "--minify", "-o", "json");
  const server = (JSON.parse(text) as {
    clusters: { cluster: { server: string } }[];
  }).clusters[0]?.cluster.server ?? "";
  return Number(new URL(server).port);
}

async function startBoth(): Promise<Record<KubeletKind, Node>> {
  const join = {
    bootstrapKubeconfig: cluster.bootstrapKubeconfig,
    ca: cluster.ca,
  };
  const started = await Promise.allSettled(
    KINDS.map((kind) => startNode(kind, ROOTS[kind], join, SPECS[kind])),
  );
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    for (const s of started) {
      if (s.status === "fulfilled") await s.value[Symbol.asyncDispose]();
    }
    throw (failed as PromiseRejectedResult).reason;
  }
  const [upstream, ours] = started.map((s) =>
    (s as PromiseFulfilledResult<Node>).value
  );
  return { upstream: upstream!, ours: ours! };
}

/**
 * A pod pinned to `node`: `busy` loops in the shell (a tenth of a core), else holds
 * {@linkcode IDLE_MEMORY} in its /dev/shm (charged to its cgroup) and sleeps.
 */
const IDLE_MEMORY = 12 * 2 ** 20;

function testPod(kind: KubeletKind, busy: boolean): unknown {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `${busy ? "busy" : "idle"}-${kind}`, namespace: NS },
    spec: {
      nodeName: SPECS[kind].node,
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: "main",
        image: CRI_IMAGE,
        imagePullPolicy: "Never",
        command: busy ? ["sh", "-c", "while :; do :; done"] : [
          "sh",
          "-c",
          `head -c ${IDLE_MEMORY} /dev/zero > /dev/shm/fill; exec sleep 100000`,
        ],
        resources: {
          requests: { cpu: "10m", memory: "8Mi" },
          limits: { cpu: "100m", memory: "32Mi" },
        },
      }],
    },
  };
}

async function applyJson(text: string): Promise<void> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, text);
    await kubectl("apply", "-f", file);
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

async function deleteJson(text: string): Promise<void> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, text);
    await kubectl("delete", "-f", file, "--ignore-not-found", "--wait=false")
      .catch(() => {});
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

const raw = (kind: KubeletKind, path: string) =>
  kubectl("get", "--raw", `/api/v1/nodes/${SPECS[kind].node}/proxy${path}`);

/** `kubectl top` output, or undefined while it fails (metrics not there yet). */
async function top(args: string[]): Promise<string | undefined> {
  const r = await run(`${cluster.bin}/kubectl`, [
    "--kubeconfig",
    cluster.kubeconfig,
    "top",
    ...args,
  ]);
  return r.code === 0 ? r.stdout : undefined;
}

/**
 * Families whose label sets differ between the two kubelets' `/metrics/cadvisor`, and why
 * (docs/differences.md, "/metrics/cadvisor"); any other difference in a shared family fails.
 */
const CADVISOR_KEPT_LABELS: Record<string, string> = {};

/**
 * `/metrics/resource` families upstream has and we may lack, and why (docs/differences.md,
 * "/metrics/resource"); any other difference fails.
 */
const RESOURCE_KEPT: Record<string, string> = {
  "container_swap_usage_bytes":
    "from CRI swap stats, which containerd 1.6 does not fill (upstream: cAdvisor)",
  "container_swap_limit_bytes": "as container_swap_usage_bytes",
  "pod_swap_usage_bytes": "the sum of container_swap_usage_bytes",
};

Deno.test({
  name:
    "kubectl top shows the same kind of figures for kubelet.ts and the upstream kubelet",
  ignore: missing !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    let manifest: string | undefined;
    if (metricsServer) {
      const image = await run("bash", [
        `${ROOT}/scripts/metrics_server/image.sh`,
        metricsServer,
      ]);
      assert.equal(image.code, 0, `image.sh failed: ${image.stderr}`);
      manifest = metricsServerManifest({
        image: image.stdout.trim(),
        node: SPECS.upstream.node,
        port: METRICS_SERVER_PORT,
        apiServerPort: await apiServerPort(),
      });
    }
    const cleanUp = async () => {
      if (manifest) await deleteJson(manifest);
      await kubectl("delete", "namespace", NS, "--ignore-not-found")
        .catch(() => {});
      for (const kind of KINDS) await deleteNode(SPECS[kind].node);
    };
    await cleanUp();
    const nodes = await startBoth();
    try {
      await Promise.all(KINDS.map((kind) =>
        waitFor(
          `${kind} node Ready`,
          async () =>
            conditionTrue(await getJson("node", SPECS[kind].node), "Ready") ||
            undefined,
          180_000,
        )
      ));
      await kubectl("create", "namespace", NS);
      await applyJson(JSON.stringify({
        apiVersion: "v1",
        kind: "List",
        items: KINDS.flatMap((k) => [testPod(k, true), testPod(k, false)]),
      }));
      if (manifest) await applyJson(manifest);
      await kubectl(
        "-n",
        NS,
        "wait",
        "--for=condition=Ready",
        "pod",
        "--all",
        "--timeout=300s",
      );

      // the metric families and their label names, once the busy pod is in both
      const families = {} as Record<
        KubeletKind,
        Record<string, Map<string, string[]>>
      >;
      for (const kind of KINDS) {
        families[kind] = {};
        for (const path of ["/metrics/resource", "/metrics/cadvisor"]) {
          families[kind][path] = await waitFor(
            `${path} of ${kind} with the busy pod`,
            async () => {
              const text = await raw(kind, path);
              return text.includes(`busy-${kind}`)
                ? familyLabels(text)
                : undefined;
            },
            180_000,
          );
        }
      }
      const show = (m: Map<string, string[]>) =>
        Object.fromEntries([...m].map(([f, l]) => [f, l.join(",")]));
      // deno-lint-ignore no-console
      console.log(
        "/metrics/resource families:",
        JSON.stringify(
          { upstream: show(families.upstream["/metrics/resource"]!) },
          null,
          1,
        ),
      );
      const upstreamResource = show(families.upstream["/metrics/resource"]!);
      const ourResource = show(families.ours["/metrics/resource"]!);
      for (const family of Object.keys(RESOURCE_KEPT)) {
        if (!(family in ourResource)) delete upstreamResource[family];
      }
      assert.deepEqual(
        ourResource,
        upstreamResource,
        "/metrics/resource families and label names",
      );
      const up = families.upstream["/metrics/cadvisor"]!;
      const ours = families.ours["/metrics/cadvisor"]!;
      const lacking = [...up.keys()].filter((f) => !ours.has(f)).sort();
      // deno-lint-ignore no-console
      console.log(
        `/metrics/cadvisor: ${ours.size} families here, ${up.size} upstream; not here: ${
          lacking.join(" ")
        }`,
      );
      for (const [family, labels] of ours) {
        assert.ok(up.has(family), `${family} is not an upstream family`);
        if (family in CADVISOR_KEPT_LABELS) continue;
        assert.deepEqual(labels, up.get(family), `labels of ${family}`);
      }

      if (!manifest) return;
      // kubectl top: figures for both nodes, the busy pod above the idle one on each
      const nodeTable = await waitFor("kubectl top node figures", async () => {
        const text = await top(["node"]);
        if (text === undefined) return undefined;
        const rows = parseTopNodes(text);
        return KINDS.every((k) =>
            rows.get(SPECS[k].node)?.cpuMillis !== undefined
          )
          ? text
          : undefined;
      }, 300_000);
      const podTable = await waitFor("kubectl top pod figures", async () => {
        const text = await top(["pod", "-A"]);
        if (text === undefined) return undefined;
        const rows = parseTopPods(text);
        return KINDS.every((k) => {
            const busy = rows.get(`${NS}/busy-${k}`);
            const idle = rows.get(`${NS}/idle-${k}`);
            // the idle pod's memory is seen by both (most of what it holds)
            return busy && idle && busy.cpuMillis > idle.cpuMillis &&
              idle.memoryBytes >= IDLE_MEMORY * 0.75;
          })
          ? text
          : undefined;
      }, 300_000);
      // deno-lint-ignore no-console
      console.log(
        `kubectl top node:\n${nodeTable}\nkubectl top pod -A:\n${podTable}`,
      );
    } finally {
      await cleanUp();
      for (const kind of KINDS) await nodes[kind][Symbol.asyncDispose]();
    }
  },
});
