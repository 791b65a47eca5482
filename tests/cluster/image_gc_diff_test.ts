/**
 * Differential: image garbage collection under the upstream kubelet and under kubelet.ts, both
 * joined to the shared control plane, each on its own containerd. Before each kubelet starts,
 * its containerd gets small distinct images (busybox plus a config naming each, so each has its
 * own id): one for a running pod, one for a pod whose only container has exited, two that
 * nothing uses. A fifth unused one is imported once the pods have started, after the kubelet's
 * first look at the images. A drop-in (`--config-dir`, the same for both) puts the high
 * threshold at 1 % and the low one at 0 %, so usage is always over it and every candidate old
 * enough goes, with `imageMinimumGCAge: 3m`: the pass 5 min after the start (upstream's
 * `ImageGCPeriod`) finds the images present at the start older than that and the late one just
 * detected. Compared: which images each removed and kept (by name, the sandbox image too:
 * containerd 1.6 does not pin it and neither kubelet is told its name) once a pass has removed
 * some, and the node's image GC warnings (`FreeDiskSpaceFailed`, `ImageGCFailed`,
 * `InvalidDiskCapacity`; figures masked) of that pass. Those of the pass at the start are
 * shown, not compared: upstream's finds no image filesystem figures yet (docs/differences.md).
 * The pods use `dnsPolicy: Default`: a `MissingClusterDNS` event per pod sync would use up the
 * node's event budget (25, then one per 5 min) before the pass's warnings.
 * Needs root, the control plane (scripts/cluster_env.sh) and the peers; skips otherwise.
 */
import assert from "node:assert/strict";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import type { KubeletKind, Node, NodeSpec } from "../conformance/node.ts";
import { CRI_IMAGE, getJson, kubectl, run, waitFor } from "./_cluster.ts";
import {
  applyObject,
  nodePairMissing,
  PAIR_KINDS,
  withNodePair,
} from "./_node_pair.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Bridges, subnets and ports of this test alone. */
const SPECS: Record<KubeletKind, NodeSpec> = {
  upstream: {
    node: "kts-igc-upstream",
    bridge: "ktsig0",
    subnet: "10.180.0.0/16",
    ip: "10.180.0.1",
    port: 18110,
    healthz: 18108,
  },
  ours: {
    node: "kts-igc-ours",
    bridge: "ktsig1",
    subnet: "10.181.0.0/16",
    ip: "10.181.0.1",
    port: 18120,
    healthz: 18118,
  },
};
const ROOTS: Record<KubeletKind, string> = {
  upstream: "/tmp/kts-cri-igu",
  ours: "/tmp/kts-cri-igo",
};
const CONFIG_DIR = "/tmp/kts-igc-dropins";
const IMAGE_DIR = "/tmp/kts-igc-images";
const PAUSE = Deno.env.get("KUBELET_TS_CRI_PAUSE_IMAGE") ??
  "kts.local/pause:3.9";

/** The test's images: imported before the kubelet starts, and the late one after. */
const IMAGES = {
  running: "kts.local/igc-running:1",
  exited: "kts.local/igc-exited:1",
  unusedA: "kts.local/igc-unused-a:1",
  unusedB: "kts.local/igc-unused-b:1",
  late: "kts.local/igc-late:1",
};
const EARLY = [IMAGES.running, IMAGES.exited, IMAGES.unusedA, IMAGES.unusedB];

const missing = await nodePairMissing();
if (missing) {
  // deno-lint-ignore no-console
  console.warn(`tests/cluster/image_gc_diff_test.ts skipped: ${missing}`);
}

async function bash(script: string, ...args: string[]): Promise<void> {
  const r = await run("bash", ["-c", script, "bash", ...args]);
  if (r.code !== 0) {
    throw new Error(`bash ${script} ${args.join(" ")}: ${r.stderr}`);
  }
}

/** One oci-layout tar per test image, built as scripts/cri_env.sh builds its busybox. */
async function buildImages(): Promise<void> {
  await Deno.mkdir(IMAGE_DIR, { recursive: true });
  for (const name of Object.values(IMAGES)) {
    await bash(
      `set -euo pipefail
       kts_die() { echo "$*" >&2; exit 1; }
       . "$1/scripts/cri_env/build_image.sh"
       kts_build_image "$2/work" "$3" "$2/$4.tar" null '["/bin/sh"]'`,
      ROOT,
      IMAGE_DIR,
      name,
      tarName(name),
    );
  }
}

function tarName(image: string): string {
  return image.replace(/[^a-z0-9]+/g, "-");
}

async function importImages(socket: string, images: string[]): Promise<void> {
  for (const name of images) {
    await bash(
      'ctr -a "$1" -n k8s.io images import --all-platforms "$2" >/dev/null',
      socket,
      `${IMAGE_DIR}/${tarName(name)}.tar`,
    );
  }
}

/** The drop-in both kubelets read: usage always over the high threshold, a 3 min minimum age. */
async function writeDropIn(): Promise<void> {
  await Deno.mkdir(CONFIG_DIR, { recursive: true });
  await Deno.writeTextFile(
    `${CONFIG_DIR}/50-image-gc.conf`,
    [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      "imageGCHighThresholdPercent: 1",
      "imageGCLowThresholdPercent: 0",
      "imageMinimumGCAge: 3m",
      "",
    ].join("\n"),
  );
}

function pod(
  name: string,
  ns: string,
  node: string,
  image: string,
  command: string[],
): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns },
    spec: {
      nodeName: node,
      restartPolicy: "Never",
      dnsPolicy: "Default",
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: "main",
        image,
        imagePullPolicy: "Never",
        command,
      }],
    },
  };
}

interface PodJson {
  status?: { phase?: string; message?: string };
}

/** Image names by id, as the node's containerd lists them now. */
async function listImages(socket: string): Promise<Map<string, string>> {
  const runtime = createCriRuntime({ endpoint: `unix://${socket}` });
  try {
    const { images } = await runtime.listImages({});
    return new Map(images.map((i) => [i.id, i.repoTags[0] ?? i.id]));
  } finally {
    await runtime.close?.();
  }
}

/** Figures vary with the disk: byte counts. */
function maskNumbers(text: string): string {
  return text.replace(/\d+/g, "<n>");
}

/** What one side showed. */
interface Outcome {
  removed: string[];
  kept: string[];
  /** Distinct `reason: message` of the node's image GC warnings from the removing pass. */
  events: string[];
  /** The same, from the passes before it (not compared). */
  earlierEvents: string[];
  /** From the kubelet's healthz to the first removal seen. */
  secondsToFirstRemoval: number;
}

async function scenario(
  kind: KubeletKind,
  node: Node,
  times: { testStart: number; startedAt: number },
): Promise<Outcome> {
  const { testStart, startedAt } = times;
  const ns = `kts-igc-${kind}`;
  const socket = `${ROOTS[kind]}/cri/containerd.sock`;
  await kubectl("create", "namespace", ns).catch(() => {});
  await applyObject(
    pod("running", ns, node.name, IMAGES.running, ["sleep", "3600"]),
  );
  await applyObject(pod("exited", ns, node.name, IMAGES.exited, ["true"]));
  await waitFor(`${kind}: one pod running, one succeeded`, async () => {
    const phase = async (name: string) =>
      (await getJson<PodJson>("pod", "-n", ns, name))?.status?.phase;
    return (await phase("running")) === "Running" &&
        (await phase("exited")) === "Succeeded"
      ? true
      : undefined;
  }, 180_000).catch(async (e) => {
    // what the pods showed (an image removed too early: ErrImageNeverPull)
    const list = await getJson<{ items: unknown[] }>("pods", "-n", ns);
    const statuses = list?.items.map((p) => (p as PodJson).status);
    throw new Error(`${e}\n${JSON.stringify(statuses)}`);
  });
  // after the kubelet's first look (at its start): first detected by a later pass
  await importImages(socket, [IMAGES.late]);
  const before = await listImages(socket);
  for (const name of [...EARLY, IMAGES.late, PAUSE, CRI_IMAGE]) {
    assert.ok(
      [...before.values()].includes(name),
      `${kind}: ${name} is on the node`,
    );
  }
  let firstRemoval = 0;
  let lastChange = 0;
  let last = before;
  const after = await waitFor(
    `${kind}: an image GC pass removing images`,
    async () => {
      const now = await listImages(socket);
      if (
        now.size !== last.size || [...now.keys()].some((id) => !last.has(id))
      ) {
        lastChange = Date.now();
        if (!firstRemoval && [...before.keys()].some((id) => !now.has(id))) {
          firstRemoval = lastChange;
        }
        last = now;
      }
      // a pass removes its images within a second; the next is 5 min later
      return firstRemoval && Date.now() - lastChange >= 10_000
        ? now
        : undefined;
    },
    600_000,
  );
  const removed: string[] = [];
  const kept: string[] = [];
  for (const [id, name] of before) {
    (after.has(id) ? kept : removed).push(name);
  }
  const events = await getJson<{ items: EventJson[] }>(
    "events",
    "-n",
    "default",
    "--field-selector",
    `involvedObject.kind=Node,involvedObject.name=${node.name}`,
  );
  // the removing pass's warnings come after its first removal (clock skew: none, one host)
  const passStart = new Date(firstRemoval - 5_000).toISOString();
  // an earlier run's node of the same name left its own (kept for an hour)
  const runStart = new Date(testStart - 5_000).toISOString();
  const warnings = (events?.items ?? []).filter((e) =>
    ["FreeDiskSpaceFailed", "ImageGCFailed", "InvalidDiskCapacity"]
      .includes(e.reason) && eventTime(e) >= runStart
  );
  const distinct = (list: EventJson[]) =>
    [...new Set(list.map((e) => `${e.reason}: ${maskNumbers(e.message)}`))]
      .sort();
  return {
    removed: removed.sort(),
    kept: kept.sort(),
    events: distinct(warnings.filter((e) => eventTime(e) >= passStart)),
    earlierEvents: distinct(
      warnings.filter((e) => eventTime(e) < passStart),
    ),
    secondsToFirstRemoval: Math.round((firstRemoval - startedAt) / 1000),
  };
}

interface EventJson {
  reason: string;
  message: string;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
}

/** When the event last happened, as an ISO string (lastTimestamp is at seconds). */
function eventTime(e: EventJson): string {
  return new Date(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? 0)
    .toISOString();
}

Deno.test({
  name:
    "image GC: both kubelets remove the same unused images and keep those of containers and the young one",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const testStart = Date.now();
    await writeDropIn();
    await buildImages();
    const startedAt: Record<string, number> = {};
    const { upstream, ours } = await withNodePair(
      {
        specs: SPECS,
        roots: ROOTS,
        options: () => ({
          configDir: CONFIG_DIR,
          prepareRuntime: (socket) => importImages(socket, EARLY),
        }),
        started: (kind) => startedAt[kind] = Date.now(),
      },
      (kind, node) =>
        scenario(kind, node, { testStart, startedAt: startedAt[kind]! }),
      async () => {
        for (const kind of PAIR_KINDS) {
          await kubectl(
            "delete",
            "namespace",
            `kts-igc-${kind}`,
            "--wait=false",
          ).catch(() => {});
        }
        await Deno.remove(IMAGE_DIR, { recursive: true }).catch(() => {});
      },
    );
    const sides = JSON.stringify({ upstream, ours }, null, 2);
    // deno-lint-ignore no-console
    console.log(sides);
    // the scenario holds: in use and young kept, old unused removed (upstream as the oracle)
    assert.deepEqual(
      upstream.kept,
      [IMAGES.exited, IMAGES.late, IMAGES.running].sort(),
      `upstream kept other images than the scenario means:\n${sides}`,
    );
    assert.deepEqual(
      { removed: ours.removed, kept: ours.kept, events: ours.events },
      {
        removed: upstream.removed,
        kept: upstream.kept,
        events: upstream.events,
      },
      `kubelet.ts (actual) and upstream (expected) differ:\n${sides}`,
    );
  },
});
