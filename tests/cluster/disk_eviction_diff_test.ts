/**
 * Differential: disk-pressure (nodefs) eviction under the upstream kubelet and under kubelet.ts,
 * both joined to the shared control plane, each on its own containerd. Each node's whole root
 * (kubelet root dir, pod logs, containerd's root and state) lives on a loop-mounted ext4 image
 * of its own, so nodefs and imagefs are one small disk, as on a single-disk node. A drop-in
 * (`--config-dir`, the same file for both) sets `nodefs.available<200Mi`. Five pods of two
 * priorities and different ephemeral-storage requests write a few MiB each into a disk
 * emptyDir; then a static pod (critical, never evicted) fills the disk until the threshold
 * stays met even once every other pod is gone. The images are in use and no container is
 * dead, so the node-level reclaim (container and image GC) frees nothing and the kubelets
 * must evict. Compared: the order of evictions, each evicted pod's phase, reason, message
 * (quantities masked) and DisruptionTarget condition, the node's DiskPressure condition and
 * disk-pressure taint, and the refusal of a non-critical (Burstable) pod bound to the node
 * under pressure. Needs root, the control plane (scripts/cluster_env.sh) and the peers;
 * skips otherwise.
 */
import assert from "node:assert/strict";
import type { KubeletKind, NodeSpec } from "../conformance/node.ts";
import { CRI_IMAGE, kubectl, run, waitFor } from "./_cluster.ts";
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
    node: "kts-disk-upstream",
    bridge: "ktsdp0",
    subnet: "10.182.0.0/16",
    ip: "10.182.0.1",
    port: 18250,
    healthz: 18248,
  },
  ours: {
    node: "kts-disk-ours",
    bridge: "ktsdp1",
    subnet: "10.183.0.0/16",
    ip: "10.183.0.1",
    port: 18260,
    healthz: 18258,
  },
};
const ROOTS: Record<KubeletKind, string> = {
  upstream: "/tmp/kts-cri-dpu",
  ours: "/tmp/kts-cri-dpo",
};
const CONFIG_DIR = "/tmp/kts-dp-dropins";
const PRIORITY_CLASS = "kts-dp-high";
/** The node's disk. */
const DISK_MIB = 450;
const THRESHOLD_MIB = 200;
/**
 * What the ballast leaves free: under the threshold by more than the holders write, so the
 * pressure outlasts every eviction.
 */
const BALLAST_LEAVES_MIB = 90;

async function prerequisitesMissing(): Promise<string | undefined> {
  if ((await run("bash", ["-c", "command -v mkfs.ext4"])).code !== 0) {
    return "mkfs.ext4 is missing (apt-get install e2fsprogs)";
  }
  return await nodePairMissing("containerd, the kubelets, loop mounts");
}

const missing = await prerequisitesMissing();
if (missing) {
  // deno-lint-ignore no-console
  console.warn(`tests/cluster/disk_eviction_diff_test.ts skipped: ${missing}`);
}

async function must(cmd: string, args: string[]): Promise<void> {
  const r = await run(cmd, args);
  if (r.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed: ${r.stderr.trim()}`);
  }
}

/** The node's own disk: a fresh ext4 image next to the root, loop-mounted on it. */
async function mountDisk(root: string): Promise<void> {
  const image = `${root}.img`;
  await Deno.remove(image).catch(() => {});
  await must("truncate", ["-s", `${DISK_MIB}M`, image]);
  // -m 0: no blocks reserved for root, so "available" is all that is free
  await must("mkfs.ext4", ["-q", "-F", "-m", "0", image]);
  await must("mount", ["-o", "loop", image, root]);
}

/**
 * Both kubelets' drop-in: the disk threshold, the others out of reach, image GC by threshold
 * off (the upstream side's base configuration already has it so), and volume usage measured
 * every 10 s (upstream ranks by a cached figure, `volumeStatsAggPeriod`).
 */
async function writeDropIn(): Promise<void> {
  await Deno.mkdir(CONFIG_DIR, { recursive: true });
  await Deno.writeTextFile(
    `${CONFIG_DIR}/50-eviction.conf`,
    [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      "evictionHard:",
      '  memory.available: "100Mi"',
      `  nodefs.available: "${THRESHOLD_MIB}Mi"`,
      '  nodefs.inodesFree: "1%"',
      '  imagefs.available: "1%"',
      '  imagefs.inodesFree: "1%"',
      "evictionPressureTransitionPeriod: 30s",
      "imageGCHighThresholdPercent: 100",
      "imageGCLowThresholdPercent: 99",
      "volumeStatsAggPeriod: 10s",
      "",
    ].join("\n"),
  );
}

/** A pod on `node` writing `mib` MiB into a disk emptyDir, Ready once written. */
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
    metadata: { name, namespace: ns, labels: { "kts-dp": "holder" } },
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
          `head -c ${mib}m /dev/zero > /data/fill && sync && touch /data/done; exec sleep 3600`,
        ],
        volumeMounts: [{ name: "data", mountPath: "/data" }],
        readinessProbe: {
          exec: { command: ["test", "-f", "/data/done"] },
          periodSeconds: 1,
        },
        ...(extra.resources ? { resources: extra.resources } : {}),
      }],
      volumes: [{ name: "data", emptyDir: {} }],
    },
  };
}

/** The five pods with what each writes (MiB). Expected order in the test below. */
const WRITES: Record<string, number> = {
  "besteffort-big": 24,
  "besteffort": 8,
  "over-request": 20,
  "besteffort-high": 32,
  "under-request": 16,
};

function holders(ns: string, node: string): Record<string, unknown>[] {
  const w = WRITES;
  return [
    holder("besteffort-big", ns, node, w["besteffort-big"]!),
    holder("besteffort", ns, node, w["besteffort"]!),
    // 4Mi above its request: after `besteffort` (8Mi above), before it by raw use
    holder("over-request", ns, node, w["over-request"]!, {
      resources: { requests: { "ephemeral-storage": "16Mi" } },
    }),
    // the most written, but of higher priority
    holder("besteffort-high", ns, node, w["besteffort-high"]!, {
      priorityClassName: PRIORITY_CLASS,
    }),
    // within its request: last
    holder("under-request", ns, node, w["under-request"]!, {
      resources: { requests: { "ephemeral-storage": "64Mi" } },
    }),
  ];
}

/** Takes the disk down to `BALLAST_LEAVES_MIB` free in one allocation, then holds it. */
function ballastManifest(): string {
  const keepKi = BALLAST_LEAVES_MIB * 1024;
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
          `avail=$(df -k /data | tail -n 1 | awk '{print $(NF-2)}'); ` +
          `n=$(( (avail - ${keepKi}) / 1024 )); ` +
          // one allocation: the node goes under the threshold in one step, never mid-write
          `[ "$n" -gt 0 ] && fallocate -l $((n * 1048576)) /data/fill; ` +
          `exec sleep 3600`,
        ],
        volumeMounts: [{ name: "data", mountPath: "/data" }],
      }],
      volumes: [{ name: "data", emptyDir: {} }],
    },
  });
}

/**
 * Upstream ranks by a cached volume figure (refreshed every `volumeStatsAggPeriod`): waits
 * until its summary shows what every holder wrote, so its ranking does not see a figure
 * taken before the write. kubelet.ts measures in the eviction pass itself.
 */
async function volumesMeasured(kind: KubeletKind, node: string): Promise<void> {
  if (kind !== "upstream") return;
  await waitFor(
    `${kind}: the summary shows every holder's volume`,
    async () => {
      const summary = JSON.parse(
        await kubectl(
          "get",
          "--raw",
          `/api/v1/nodes/${node}/proxy/stats/summary`,
        ),
      ) as {
        pods?: {
          podRef: { name: string };
          volume?: { name: string; usedBytes?: number }[];
        }[];
      };
      for (const [name, mib] of Object.entries(WRITES)) {
        const pod = summary.pods?.find((p) => p.podRef.name === name);
        const used = pod?.volume?.find((v) => v.name === "data")?.usedBytes ??
          0;
        if (used < mib * 1024 * 1024) return undefined;
      }
      return true;
    },
    120_000,
  );
}

/** The `available: 92493Ki` of an eviction message, in bytes. */
function availableIn(message: string): number | undefined {
  const m = /available: (\d+)(Ki|Mi|Gi)?\b/.exec(message);
  if (!m) return undefined;
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[m[2] ?? ""] ?? 1;
  return Number(m[1]) * unit;
}

/**
 * For each eviction after the first: did the kubelet see the previous evicted pod's disk
 * freed before it chose this one (upstream waits for the pod to be cleaned up, its volumes
 * torn down, before the next pass)? The pressure lasts throughout and nothing else frees
 * disk, so the available figure rises by what that pod wrote (3/4 of it: the kubelets' own
 * logs are on the same disk).
 */
function reclaimedBeforeNext(
  order: string[],
  messages: Record<string, string>,
): boolean[] {
  const out: boolean[] = [];
  for (let i = 1; i < order.length; i++) {
    const before = availableIn(messages[order[i - 1]!] ?? "");
    const after = availableIn(messages[order[i]!] ?? "");
    const wrote = (WRITES[order[i - 1]!] ?? 0) * 2 ** 20;
    out.push(
      before !== undefined && after !== undefined &&
        after - before >= wrote * 0.75,
    );
  }
  return out;
}

Deno.test({
  name:
    "disk pressure: both kubelets evict the same pods in the same order with the same status",
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
    const sides = await withNodePair(
      {
        specs: SPECS,
        roots: ROOTS,
        options: () => ({ configDir: CONFIG_DIR, mountRoot: mountDisk }),
      },
      async (kind, node) => {
        const ns = `kts-disk-${kind}`;
        // under disk pressure (the ballast stays) even a Burstable pod is refused
        const late = holder("late-burstable", ns, node.name, 1, {
          resources: { requests: { memory: "4Mi" } },
        }) as { metadata: { name: string } };
        const outcome = await runEvictionScenario({
          kind,
          node,
          root: ROOTS[kind],
          namespace: ns,
          label: "kts-dp",
          holders: holders(ns, node.name),
          ballast: ballastManifest(),
          condition: "DiskPressure",
          taint: "node.kubernetes.io/disk-pressure",
          late,
          beforeBallast: () => volumesMeasured(kind, node.name),
        });
        return {
          ...outcome,
          reclaimed: reclaimedBeforeNext(outcome.order, outcome.messages),
        };
      },
      async () => {
        for (const kind of PAIR_KINDS) {
          await Deno.remove(`${ROOTS[kind]}/manifests/ballast.json`).catch(
            () => {},
          );
        }
        // the nodes' teardown has unmounted the disks with the roots
        for (const kind of PAIR_KINDS) {
          await Deno.remove(`${ROOTS[kind]}.img`).catch(() => {});
          await kubectl(
            "delete",
            "namespace",
            `kts-disk-${kind}`,
            "--wait=false",
          )
            .catch(() => {});
        }
        await kubectl("delete", "priorityclass", PRIORITY_CLASS).catch(
          () => {},
        );
      },
    );
    const { upstream, ours } = sides;
    // deno-lint-ignore no-console
    console.log(JSON.stringify(sides, null, 2));
    assert.deepEqual(upstream.order, [
      "besteffort-big",
      "besteffort",
      "over-request",
      "besteffort-high",
      "under-request",
    ]);
    assert.deepEqual(ours.order, upstream.order);
    // each pass after an eviction sees that pod's disk freed: ours is held to it; upstream's is
    // only reported: its figures come from cAdvisor's periodic housekeeping, which lags under load
    assert.deepEqual(ours.reclaimed, [true, true, true, true]);
    assert.deepEqual(ours.evicted, upstream.evicted);
    assert.deepEqual(ours.pressure, upstream.pressure);
    assert.deepEqual(ours.refused, upstream.refused);
  },
});
