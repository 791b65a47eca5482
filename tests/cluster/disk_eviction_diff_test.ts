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
  run,
  waitFor,
} from "./_cluster.ts";
import { keepLogs, nodePairMissing } from "./_node_pair.ts";

const KINDS: KubeletKind[] = ["upstream", "ours"];

/** Bridges, subnets and ports of this test alone. */
const SPECS: Record<KubeletKind, NodeSpec> = {
  upstream: {
    node: "kts-dp-upstream",
    bridge: "ktsdp0",
    subnet: "10.182.0.0/16",
    ip: "10.182.0.1",
    port: 18250,
    healthz: 18248,
  },
  ours: {
    node: "kts-dp-ours",
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

/** What one side showed. */
interface Outcome {
  order: string[];
  evicted: Record<string, unknown>;
  pressure: { condition?: unknown; taint?: boolean };
  refused: unknown;
  /** The evicted pods' messages unmasked (reported only: the figures are measurements). */
  messages: Record<string, string>;
  reclaimed: boolean[];
  /** From the ballast's manifest to the first eviction seen, seconds (reported only). */
  firstEvictionSeconds: number | undefined;
}

async function scenario(kind: KubeletKind, node: Node): Promise<Outcome> {
  const ns = `kts-dp-${kind}`;
  const name = node.name;
  await kubectl("create", "namespace", ns).catch(() => {});
  for (const pod of holders(ns, name)) await apply(pod);
  let early: string | undefined;
  await waitFor(`${kind}: every holder Ready`, async () => {
    const list = await getJson<{ items: PodJson[] }>(
      "pods",
      "-n",
      ns,
      "-l",
      "kts-dp=holder",
    );
    // evicted before the ballast: the node was under pressure from the start
    const failed = list?.items.find((p) => p.status?.phase === "Failed");
    if (failed) {
      early =
        `${kind}: ${failed.metadata.name} failed before the ballast: ${failed.status?.message}`;
      return true;
    }
    const ready = list?.items.filter((p) =>
      p.status?.conditions?.some((c) =>
        c.type === "Ready" && c.status === "True"
      )
    ) ?? [];
    return ready.length === 5 ? true : undefined;
  }, 300_000).catch(async (e) => {
    // what each pod showed, for the reader of the failure
    const list = await getJson<{ items: PodJson[] }>("pods", "-n", ns);
    // deno-lint-ignore no-console
    console.warn(JSON.stringify(list?.items.map((p) => p.status), null, 1));
    throw e;
  });
  if (early) throw new Error(early);
  await volumesMeasured(kind, name);
  const start = Date.now();
  await Deno.writeTextFile(
    `${ROOTS[kind]}/manifests/ballast.json`,
    ballastManifest(),
  );
  const order: string[] = [];
  const evicted: Record<string, unknown> = {};
  const messages: Record<string, string> = {};
  let pressure: Outcome["pressure"] = {};
  let firstEvictionSeconds: number | undefined;
  await waitFor(`${kind}: all five evicted`, async () => {
    const list = await getJson<{ items: PodJson[] }>(
      "pods",
      "-n",
      ns,
      "-l",
      "kts-dp=holder",
    );
    const failed = (list?.items ?? []).filter((p) =>
      p.status?.phase === "Failed" && !order.includes(p.metadata.name)
    );
    if (failed.length > 0 && firstEvictionSeconds === undefined) {
      firstEvictionSeconds = Math.round((Date.now() - start) / 1000);
    }
    // several seen in one poll: the DisruptionTarget times order them (seconds)
    failed.sort((a, b) => {
      const t = (p: PodJson) =>
        p.status?.conditions?.find((c) => c.type === "DisruptionTarget")
          ?.lastTransitionTime ?? "";
      return t(a) < t(b) ? -1 : t(a) > t(b) ? 1 : 0;
    });
    for (const p of failed) {
      order.push(p.metadata.name);
      messages[p.metadata.name] = p.status?.message ?? "";
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
      const c = n?.status?.conditions?.find((c) => c.type === "DiskPressure");
      if (c?.status === "True") {
        pressure = {
          condition: { status: c.status, reason: c.reason, message: c.message },
          taint: n?.spec?.taints?.some((t) =>
            t.key === "node.kubernetes.io/disk-pressure" &&
            t.effect === "NoSchedule"
          ) ?? false,
        };
      }
    }
    return order.length === 5 ? true : undefined;
  }, 900_000);
  // under disk pressure (the ballast stays) even a Burstable pod is refused
  const late = holder("late-burstable", ns, name, 1, {
    resources: { requests: { memory: "4Mi" } },
  });
  (late.metadata as Record<string, unknown>).labels = { "kts-dp": "late" };
  await apply(late);
  const refused = await waitFor(`${kind}: the late pod refused`, async () => {
    const p = await getJson<PodJson>("pod", "-n", ns, "late-burstable");
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
      t.key === "node.kubernetes.io/disk-pressure"
    ) ?? false;
  }
  return {
    order,
    evicted,
    pressure,
    refused,
    messages,
    reclaimed: reclaimedBeforeNext(order, messages),
    firstEvictionSeconds,
  };
}

Deno.test({
  name:
    "disk pressure: both kubelets evict the same pods in the same order with the same status",
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
          mountRoot: mountDisk,
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
        "besteffort-big",
        "besteffort",
        "over-request",
        "besteffort-high",
        "under-request",
      ]);
      assert.deepEqual(upstream!.reclaimed, [true, true, true, true]);
      assert.deepEqual(ours!.order, upstream!.order);
      assert.deepEqual(ours!.reclaimed, upstream!.reclaimed);
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
      // the teardown unmounts the disks with the roots
      for (const n of nodes) await n[Symbol.asyncDispose]();
      for (const kind of KINDS) {
        await Deno.remove(`${ROOTS[kind]}.img`).catch(() => {});
        await kubectl("delete", "namespace", `kts-dp-${kind}`, "--wait=false")
          .catch(() => {});
        await deleteNode(SPECS[kind].node).catch(() => {});
      }
      await kubectl("delete", "priorityclass", PRIORITY_CLASS).catch(() => {});
    }
  },
});
