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
import type { KubeletKind, NodeSpec } from "../conformance/node.ts";
import { CRI_IMAGE, kubectl } from "./_cluster.ts";
import { runEvictionScenario } from "./_eviction_pair.ts";
import {
  applyObject,
  nodePairMissing,
  PAIR_KINDS,
  withNodePair,
} from "./_node_pair.ts";

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
    // uses the most above its request, but of higher priority: after the other two
    holder("besteffort-high", ns, node, 14, {
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

Deno.test({
  name:
    "memory pressure: both kubelets evict the same pods in the same order with the same status",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await writeDropIn();
    await applyObject({
      apiVersion: "scheduling.k8s.io/v1",
      kind: "PriorityClass",
      metadata: { name: PRIORITY_CLASS },
      value: 100,
    });
    const { upstream, ours } = await withNodePair(
      {
        specs: SPECS,
        roots: ROOTS,
        options: () => ({ configDir: CONFIG_DIR }),
      },
      (kind, node) =>
        runEvictionScenario({
          kind,
          node,
          root: ROOTS[kind],
          namespace: `kts-ev-${kind}`,
          label: "kts-ev",
          holders: holders(`kts-ev-${kind}`, node.name),
          ballast: ballastManifest(),
          condition: "MemoryPressure",
          taint: "node.kubernetes.io/memory-pressure",
          // a BestEffort pod
          late: holder("late-besteffort", `kts-ev-${kind}`, node.name, 1) as {
            metadata: { name: string };
          },
        }),
      async () => {
        for (const kind of PAIR_KINDS) {
          await Deno.remove(`${ROOTS[kind]}/manifests/ballast.json`).catch(
            () => {},
          );
          await kubectl("delete", "namespace", `kts-ev-${kind}`, "--wait=false")
            .catch(() => {});
        }
        await kubectl("delete", "priorityclass", PRIORITY_CLASS).catch(
          () => {},
        );
      },
    );
    // deno-lint-ignore no-console
    console.log(JSON.stringify({ upstream, ours }, null, 2));
    assert.deepEqual(upstream.order, [
      "over-request",
      "besteffort",
      "besteffort-high",
      "guaranteed",
      "under-request",
    ]);
    assert.deepEqual(ours.order, upstream.order);
    assert.deepEqual(ours.evicted, upstream.evicted);
    assert.deepEqual(ours.pressure, upstream.pressure);
    assert.deepEqual(ours.refused, upstream.refused);
  },
});
