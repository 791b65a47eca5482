/**
 * Differential: node-pressure eviction under the upstream kubelet and under kubelet.ts, both
 * joined to the shared control plane, each on its own containerd. A drop-in (`--config-dir`,
 * the same file for both) gives each node 800Mi of allocatable memory (systemReserved is the
 * rest) enforced on `kubepods`, so the `allocatableMemory.available<100Mi` threshold is met
 * once the pods' working set passes 700Mi. Five pods of each QoS class and two priorities
 * hold a few MiB each in a `medium: Memory` emptyDir; then a static pod (critical, never
 * evicted) takes 720Mi, and the pressure lasts until every other pod is gone. Compared: the
 * order of evictions, each evicted pod's phase, reason, message (quantities masked) and
 * DisruptionTarget condition, the node's MemoryPressure condition and memory-pressure taint,
 * and the refusal of a BestEffort pod bound to the node under pressure.
 * Needs root, the control plane (scripts/cluster_env.sh) and the peers; skips otherwise.
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
  CRI_IMAGE,
  deleteNode,
  getJson,
  kubectl,
  waitFor,
} from "./_cluster.ts";
import { keepLogs, nodePairMissing } from "./_node_pair.ts";

const KINDS: KubeletKind[] = ["upstream", "ours"];

/** Bridges, subnets and ports of this test alone. */
const SPECS: Record<KubeletKind, NodeSpec> = {
  upstream: {
    node: "kts-ev-upstream",
    bridge: "kevu",
    subnet: "10.163.0.0/16",
    ip: "10.163.0.1",
    port: 18450,
    healthz: 18448,
  },
  ours: {
    node: "kts-ev-ours",
    bridge: "kev0",
    subnet: "10.158.0.0/16",
    ip: "10.158.0.1",
    port: 18460,
    healthz: 18458,
  },
};
const ROOTS: Record<KubeletKind, string> = {
  upstream: "/tmp/kts-cri-evu",
  ours: "/tmp/kts-cri-ev",
};
const CONFIG_DIR = "/tmp/kts-ev-dropins";
const PRIORITY_CLASS = "kts-ev-high";

const missing = await nodePairMissing();
if (missing) {
  // deno-lint-ignore no-console
  console.warn(`tests/cluster/eviction_diff_test.ts skipped: ${missing}`);
}

/** Both kubelets' drop-in: 800Mi allocatable memory, the same hard thresholds. */
async function writeDropIn(): Promise<void> {
  const meminfo = await Deno.readTextFile("/proc/meminfo");
  const totalKi = Number(/^MemTotal:\s+(\d+) kB/m.exec(meminfo)![1]);
  const reservedKi = totalKi - 800 * 1024;
  await Deno.mkdir(CONFIG_DIR, { recursive: true });
  await Deno.writeTextFile(
    `${CONFIG_DIR}/50-eviction.conf`,
    [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      "evictionHard:",
      '  memory.available: "100Mi"',
      '  nodefs.available: "1%"',
      '  nodefs.inodesFree: "1%"',
      '  imagefs.available: "1%"',
      '  imagefs.inodesFree: "1%"',
      "evictionPressureTransitionPeriod: 30s",
      "enforceNodeAllocatable: [pods]",
      "systemReserved:",
      `  memory: ${reservedKi}Ki`,
      "",
    ].join("\n"),
  );
}

/** A pod on `node` holding `mib` MiB in a Memory emptyDir, Ready once it holds it. */
function holder(
  name: string,
  ns: string,
  node: string,
  mib: number,
  extra: {
    resources?: Record<string, unknown>;
    priorityClassName?: string;
  } = {},
): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels: { "kts-ev": "holder" } },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 5,
      ...(extra.priorityClassName
        ? { priorityClassName: extra.priorityClassName }
        : {}),
      containers: [{
        name: "main",
        image: CRI_IMAGE,
        imagePullPolicy: "IfNotPresent",
        command: [
          "sh",
          "-c",
          `head -c ${mib}m /dev/zero > /mem/fill && touch /mem/done; exec sleep 3600`,
        ],
        volumeMounts: [{ name: "mem", mountPath: "/mem" }],
        readinessProbe: {
          exec: { command: ["test", "-f", "/mem/done"] },
          periodSeconds: 1,
        },
        ...(extra.resources ? { resources: extra.resources } : {}),
      }],
      volumes: [{ name: "mem", emptyDir: { medium: "Memory" } }],
    },
  };
}

/** The five pods: name → pod. Expected order (upstream's ranking) in the test below. */
function holders(ns: string, node: string): Record<string, unknown>[] {
  return [
    holder("over-request", ns, node, 16, {
      resources: { requests: { memory: "4Mi" } },
    }),
    holder("besteffort", ns, node, 8),
    holder("besteffort-high", ns, node, 8, {
      priorityClassName: PRIORITY_CLASS,
    }),
    holder("guaranteed", ns, node, 8, {
      resources: {
        requests: { memory: "16Mi", cpu: "10m" },
        limits: { memory: "16Mi", cpu: "10m" },
      },
    }),
    holder("under-request", ns, node, 4, {
      resources: { requests: { memory: "32Mi" } },
    }),
  ];
}

function ballastManifest(): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "ballast", namespace: "kube-system" },
    spec: {
      containers: [{
        name: "main",
        image: CRI_IMAGE,
        imagePullPolicy: "IfNotPresent",
        command: [
          "sh",
          "-c",
          "head -c 720m /dev/zero > /mem/fill; exec sleep 3600",
        ],
        volumeMounts: [{ name: "mem", mountPath: "/mem" }],
      }],
      volumes: [{ name: "mem", emptyDir: { medium: "Memory" } }],
    },
  });
}

async function apply(object: unknown): Promise<void> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, JSON.stringify(object));
    await kubectl("apply", "-f", file);
  } finally {
    await Deno.remove(file);
  }
}

interface PodJson {
  metadata: { name: string };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
  };
}

/** Quantities vary with the measurement: `123Ki`, `4Mi`, `93112`. */
function maskQuantities(text: string): string {
  return text.replace(/\b\d+(\.\d+)?(Ki|Mi|Gi|k|M)?\b/g, "<q>");
}

/** What one side showed. */
interface Outcome {
  order: string[];
  evicted: Record<string, unknown>;
  pressure: { condition?: unknown; taint?: boolean };
  refused: unknown;
}

async function scenario(kind: KubeletKind, node: Node): Promise<Outcome> {
  const ns = `kts-ev-${kind}`;
  const name = node.name;
  await kubectl("create", "namespace", ns).catch(() => {});
  for (const pod of holders(ns, name)) await apply(pod);
  await waitFor(`${kind}: every holder Ready`, async () => {
    const list = await getJson<{ items: PodJson[] }>(
      "pods",
      "-n",
      ns,
      "-l",
      "kts-ev=holder",
    );
    const ready = list?.items.filter((p) =>
      p.status?.conditions?.some((c) =>
        c.type === "Ready" && c.status === "True"
      )
    ) ?? [];
    // evicted before the ballast: the node was under pressure from the start
    const failed = list?.items.find((p) =>
      p.status?.phase === "Failed"
    );
    if (failed) {
      throw new Error(
        `${kind}: ${failed.metadata.name} failed before the ballast: ${failed.status?.message}`,
      );
    }
    return ready.length === 5 ? true : undefined;
  }, 300_000).catch(async (e) => {
    // what each pod showed, for the reader of the failure
    const list = await getJson<{ items: PodJson[] }>("pods", "-n", ns);
    // deno-lint-ignore no-console
    console.warn(JSON.stringify(list?.items.map((p) => p.status), null, 1));
    throw e;
  });
  await Deno.writeTextFile(
    `${ROOTS[kind]}/manifests/ballast.json`,
    ballastManifest(),
  );
  const order: string[] = [];
  const evicted: Record<string, unknown> = {};
  let pressure: Outcome["pressure"] = {};
  await waitFor(`${kind}: all five evicted`, async () => {
    const list = await getJson<{ items: PodJson[] }>(
      "pods",
      "-n",
      ns,
      "-l",
      "kts-ev=holder",
    );
    const failed = (list?.items ?? []).filter((p) =>
      p.status?.phase === "Failed" && !order.includes(p.metadata.name)
    );
    // several seen in one poll: the DisruptionTarget times order them (seconds)
    failed.sort((a, b) => {
      const t = (p: PodJson) =>
        p.status?.conditions?.find((c) => c.type === "DisruptionTarget")
          ?.lastTransitionTime ?? "";
      return t(a) < t(b) ? -1 : t(a) > t(b) ? 1 : 0;
    });
    for (const p of failed) {
      order.push(p.metadata.name);
      const dt = p.status?.conditions?.find((c) =>
        c.type === "DisruptionTarget"
      );
      evicted[p.metadata.name] = {
        phase: p.status?.phase,
        reason: p.status?.reason,
        message: maskQuantities(p.status?.message ?? ""),
        disruptionTarget: dt && {
          status: dt.status,
          reason: dt.reason,
          message: maskQuantities(dt.message ?? ""),
        },
      };
    }
    if (pressure.condition === undefined) {
      const n = await getJson<{
        spec?: { taints?: { key: string; effect: string }[] };
        status?: {
          conditions?: {
            type: string;
            status: string;
            reason: string;
            message: string;
          }[];
        };
      }>("node", name);
      const c = n?.status?.conditions?.find((c) => c.type === "MemoryPressure");
      if (c?.status === "True") {
        pressure = {
          condition: { status: c.status, reason: c.reason, message: c.message },
          taint: n?.spec?.taints?.some((t) =>
            t.key === "node.kubernetes.io/memory-pressure" &&
            t.effect === "NoSchedule"
          ) ?? false,
        };
      }
    }
    return order.length === 5 ? true : undefined;
  }, 900_000);
  // under pressure (the ballast stays) a BestEffort pod bound to the node is refused
  const late = holder("late-besteffort", ns, name, 1);
  (late.metadata as Record<string, unknown>).labels = { "kts-ev": "late" };
  await apply(late);
  const refused = await waitFor(`${kind}: the late pod refused`, async () => {
    const p = await getJson<PodJson>("pod", "-n", ns, "late-besteffort");
    return p?.status?.phase === "Failed"
      ? {
        phase: p.status.phase,
        reason: p.status.reason,
        message: p.status.message,
      }
      : undefined;
  }, 120_000);
  if (!pressure.taint) {
    const n = await getJson<{ spec?: { taints?: { key: string }[] } }>(
      "node",
      name,
    );
    pressure.taint = n?.spec?.taints?.some((t) =>
      t.key === "node.kubernetes.io/memory-pressure"
    ) ?? false;
  }
  return { order, evicted, pressure, refused };
}

Deno.test({
  name:
    "memory pressure: both kubelets evict the same pods in the same order with the same status",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await writeDropIn();
    await apply({
      apiVersion: "scheduling.k8s.io/v1",
      kind: "PriorityClass",
      metadata: { name: PRIORITY_CLASS },
      value: 100,
    });
    const join = {
      bootstrapKubeconfig: cluster.bootstrapKubeconfig,
      ca: cluster.ca,
    };
    const started = await Promise.allSettled(
      KINDS.map((kind) =>
        startNode(kind, ROOTS[kind], join, SPECS[kind], {
          configDir: CONFIG_DIR,
        })
      ),
    );
    const nodes = started.flatMap((s) =>
      s.status === "fulfilled" ? [s.value] : []
    );
    let ok = false;
    try {
      const failed = started.find((s) => s.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
      const [upstream, ours] = await Promise.all(
        KINDS.map((kind, i) => scenario(kind, nodes[i]!)),
      );
      // deno-lint-ignore no-console
      console.log(JSON.stringify({ upstream, ours }, null, 2));
      assert.deepEqual(upstream!.order, [
        "over-request",
        "besteffort",
        "besteffort-high",
        "guaranteed",
        "under-request",
      ]);
      assert.deepEqual(ours!.order, upstream!.order);
      assert.deepEqual(ours!.evicted, upstream!.evicted);
      assert.deepEqual(ours!.pressure, upstream!.pressure);
      assert.deepEqual(ours!.refused, upstream!.refused);
      ok = true;
    } finally {
      if (!ok) await keepLogs(nodes);
      for (const kind of KINDS) {
        await Deno.remove(`${ROOTS[kind]}/manifests/ballast.json`).catch(
          () => {},
        );
      }
      for (const n of nodes) await n[Symbol.asyncDispose]();
      for (const kind of KINDS) {
        await kubectl("delete", "namespace", `kts-ev-${kind}`, "--wait=false")
          .catch(() => {});
        await deleteNode(SPECS[kind].node).catch(() => {});
      }
      await kubectl("delete", "priorityclass", PRIORITY_CLASS).catch(() => {});
    }
  },
});
