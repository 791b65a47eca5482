/**
 * CSI volumes end to end with a real CSI node plugin run as a host process (peers/csihostpath,
 * `bash scripts/peers.sh csi-hostpath`: CSI Identity/Node services that bind-mount a data
 * directory, plus the registration service node-driver-registrar serves): the plugin registers
 * through `<root-dir>/plugins_registry`, the node's CSINode gets the driver's entry, and a pod
 * with a claim bound to a pre-made CSI PV (CSIDriver `attachRequired: false`, so no attacher)
 * and an inline CSI volume starts, writes into both, and both are unpublished (the PV also
 * unstaged) when the pod goes. The same scenario runs under the upstream kubelet
 * (scripts/upstream_kubelet.sh), and the CSI calls and paths the two made are compared.
 */
import assert from "node:assert/strict";
import { apiKubeletMissing, createObject, pinnedPod } from "./_api_kubelet.ts";
import { startApiKubelet } from "./_api_kubelet.ts";
import { cluster, getJson, kubectl, script, waitFor } from "./_cluster.ts";
import { privateCri, privateCriMissing } from "../pod/_containerd_e2e.ts";
import { removeTree } from "../_mounts.ts";
import { inlineVolumeHandle } from "../../src/csi/mod.ts";
import { peersOutput } from "../_peers.ts";

const driverPath = await peersOutput("csi-hostpath-path");
const provisionerPath = await peersOutput("csi-provisioner-path");
const missing = apiKubeletMissing ??
  (privateCriMissing ? "no private containerd (root, cri_env)" : undefined) ??
  (driverPath
    ? undefined
    : "no CSI test driver: bash scripts/peers.sh csi-hostpath");
// deno-lint-ignore no-console
if (missing) console.log(`skipping csi_volumes_test: ${missing}`);

/** One call the driver logged. */
export interface DriverCall {
  method: string;
  request: Record<string, unknown>;
}

interface PodJson {
  metadata: { uid: string };
  status?: { phase?: string };
}

async function mountedAt(path: string): Promise<boolean> {
  const text = await Deno.readTextFile("/proc/self/mountinfo");
  return text.split("\n").some((l) => l.split(" ")[4] === path);
}

/** Starts the driver for a kubelet with `rootDir`; stops it on dispose. */
function startDriver(
  rootDir: string,
  driver: string,
  nodeId: string,
  dir: string,
): AsyncDisposable & { calls(): Promise<DriverCall[]> } {
  const callLog = `${dir}/calls.jsonl`;
  const child = new Deno.Command(driverPath!, {
    args: [
      `--driver-name=${driver}`,
      `--node-id=${nodeId}`,
      `--data-dir=${dir}/data`,
      `--csi-socket=${rootDir}/plugins/${driver}/csi.sock`,
      `--registration-socket=${rootDir}/plugins_registry/${driver}-reg.sock`,
      `--call-log=${callLog}`,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  return {
    async calls() {
      const text = await Deno.readTextFile(callLog).catch(() => "");
      return text.split("\n").filter((l) => l.trim()).map((l) =>
        JSON.parse(l) as DriverCall
      );
    },
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** What a scenario saw, with the root dir, pod UID and node name made neutral. */
export interface ScenarioResult {
  calls: string[];
  csiNodeDriver: unknown;
  /** The Node's `csi.volume.kubernetes.io/nodeid` and its topology label, once registered. */
  nodeMetadata: unknown;
}

function neutral(
  text: string,
  subs: [string, string][],
): string {
  let out = text;
  for (const [from, to] of subs) out = out.replaceAll(from, to);
  return out;
}

/**
 * The scenario, for a joined kubelet whose node (and namespace) is `node` and root dir
 * `rootDir`: registers the driver, runs the pod, deletes it; asserts what both kubelets must do.
 */
async function csiScenario(
  node: string,
  ns: string,
  rootDir: string,
  dir: string,
): Promise<ScenarioResult> {
  const driver = `${node}.csi.kts.test`;
  const pv = `${node}-pv`;
  await createObject({
    apiVersion: "storage.k8s.io/v1",
    kind: "CSIDriver",
    metadata: { name: driver },
    spec: {
      attachRequired: false,
      podInfoOnMount: true,
      volumeLifecycleModes: ["Persistent", "Ephemeral"],
    },
  });
  try {
    await using plugin = startDriver(rootDir, driver, node, dir);
    const csiNode = await waitFor("the driver in the CSINode", async () => {
      const n = await getJson<
        { spec: { drivers: { name: string }[] | null } }
      >("csinode", node);
      return n?.spec.drivers?.find((d) => d.name === driver);
    }, 60_000);
    const nodeMetadata = await waitFor("the node id annotation", async () => {
      const n = await getJson<
        {
          metadata: {
            annotations?: Record<string, string>;
            labels?: Record<string, string>;
          };
        }
      >("node", node);
      const ids = n?.metadata.annotations?.["csi.volume.kubernetes.io/nodeid"];
      return ids
        ? {
          nodeIds: ids,
          topologyLabel: n?.metadata.labels?.["topology.hostpath.csi/node"],
        }
        : undefined;
    }, 30_000);

    await createObject({
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name: pv },
      spec: {
        storageClassName: "",
        capacity: { storage: "1Mi" },
        accessModes: ["ReadWriteOnce"],
        claimRef: { namespace: ns, name: "data" },
        csi: {
          driver,
          volumeHandle: "vol-1",
          volumeAttributes: { color: "blue" },
        },
      },
    });
    await createObject({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data", namespace: ns },
      spec: {
        storageClassName: "",
        volumeName: pv,
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "1Mi" } },
      },
    });
    const pod = pinnedPod("csi-pod", ns, [
      "sh",
      "-c",
      "echo claim > /data/out && echo inline > /eph/out && sleep 3600",
    ], {
      volumeMounts: [
        { name: "data", mountPath: "/data" },
        { name: "eph", mountPath: "/eph" },
      ],
    });
    (pod.metadata as Record<string, unknown>).namespace = ns;
    (pod.spec as Record<string, unknown>).nodeName = node;
    (pod.spec as Record<string, unknown>).volumes = [
      { name: "data", persistentVolumeClaim: { claimName: "data" } },
      {
        name: "eph",
        csi: { driver, volumeAttributes: { size: "small" } },
      },
    ];
    await createObject(pod);
    let last = "";
    const running = await waitFor("pod Running", async () => {
      const p = await getJson<PodJson>("pod", "-n", ns, "csi-pod");
      last = JSON.stringify(p?.status ?? {});
      return p?.status?.phase === "Running" ? p : undefined;
    }, 120_000).catch((error) => {
      throw new Error(`${error.message}; last status ${last}`);
    });
    const uid = running.metadata.uid;
    const claimTarget =
      `${rootDir}/pods/${uid}/volumes/kubernetes.io~csi/${pv}/mount`;
    const inlineTarget =
      `${rootDir}/pods/${uid}/volumes/kubernetes.io~csi/eph/mount`;
    await waitFor("the pod's writes", async () => {
      const text = await Deno.readTextFile(`${dir}/data/vol-1/out`).catch(
        () => undefined,
      );
      return text === "claim\n" ? true : undefined;
    }, 30_000);
    assert.ok(await mountedAt(claimTarget), `${claimTarget} is mounted`);
    assert.ok(await mountedAt(inlineTarget), `${inlineTarget} is mounted`);
    assert.equal(await Deno.readTextFile(`${claimTarget}/out`), "claim\n");
    assert.equal(await Deno.readTextFile(`${inlineTarget}/out`), "inline\n");

    await kubectl("delete", "pod", "-n", ns, "csi-pod", "--wait=false");
    await waitFor("both volumes unpublished", async () => {
      const calls = await plugin.calls();
      const unpublished = calls.filter((c) =>
        c.method === "NodeUnpublishVolume"
      ).length;
      const unstaged = calls.some((c) => c.method === "NodeUnstageVolume");
      return unpublished >= 2 && unstaged ? true : undefined;
    }, 120_000);
    assert.equal(await mountedAt(claimTarget), false);
    assert.equal(await mountedAt(inlineTarget), false);
    // the claim's data outlives the pod
    assert.equal(await Deno.readTextFile(`${dir}/data/vol-1/out`), "claim\n");

    const subs: [string, string][] = [
      [await inlineVolumeHandle(uid, "eph"), "<inline-handle>"],
      [rootDir, "<root>"],
      [uid, "<uid>"],
      [driver, "<driver>"],
      [pv, "<pv>"],
      [node, "<node>"],
      [ns, "<ns>"],
    ];
    const calls = (await plugin.calls())
      // registration and the kubelet's periodic probes are not part of the volume's story
      .filter((c) => c.method.startsWith("Node") || c.method.startsWith("Reg"))
      .map((c) => neutral(`${c.method} ${JSON.stringify(c.request)}`, subs));
    return {
      calls,
      csiNodeDriver: JSON.parse(neutral(JSON.stringify(csiNode), subs)),
      nodeMetadata: JSON.parse(neutral(JSON.stringify(nodeMetadata), subs)),
    };
  } finally {
    await kubectl("delete", "pvc", "-n", ns, "data", "--wait=false").catch(
      () => {},
    );
    await kubectl("delete", "pv", pv, "--wait=false").catch(() => {});
    await kubectl("delete", "csidriver", driver).catch(() => {});
  }
}

/** The comparison file both tests write (the second one compares). */
const RESULTS = "/tmp/kts-csi-scenario";

Deno.test({
  name:
    "kubelet.ts: a registered CSI driver publishes a claim's PV (staged) and an inline volume; both are unpublished when the pod goes",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using cri = await privateCri("csi");
    const k = await startApiKubelet("csi", { criEndpoint: cri.endpoint });
    try {
      const result = await csiScenario(
        k.node,
        k.node,
        `${k.dir}/root`,
        k.dir,
      );
      // deno-lint-ignore no-console
      console.log(result.calls.join("\n"));
      await Deno.writeTextFile(
        `${RESULTS}-kubelet-ts.json`,
        JSON.stringify(result, null, 1),
      );
      assert.deepEqual(result.csiNodeDriver, {
        name: "<driver>",
        nodeID: "<node>",
        topologyKeys: ["topology.hostpath.csi/node"],
      });
      assert.deepEqual(result.nodeMetadata, {
        nodeIds: '{"<driver>":"<node>"}',
        topologyLabel: "<node>",
      });
    } finally {
      await k.stop();
    }
  },
});

Deno.test({
  name:
    "upstream kubelet: the same scenario; its CSI calls and paths match kubelet.ts's",
  ignore: missing !== undefined || Deno.env.get("KTS_CSI_UPSTREAM") !== "1",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const node = `csi-up-${crypto.randomUUID().slice(0, 6)}`;
    const root = await Deno.makeTempDir({ prefix: "kts-csi-upstream-" });
    const env = {
      KTS_UPSTREAM_ROOT: root,
      KTS_UPSTREAM_NODE: node,
      KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG: cluster.bootstrapKubeconfig,
      KUBELET_TS_CLUSTER_CA: cluster.ca,
      KTS_UPSTREAM_BRIDGE: "ktscsi0",
      KTS_UPSTREAM_SUBNET: "10.164.0.0/16",
      KTS_UPSTREAM_HEALTHZ_PORT: "18711",
      KTS_UPSTREAM_PORT: "18712",
    };
    await kubectl("create", "namespace", node);
    try {
      await script("upstream_kubelet.sh", ["up"], env);
      await waitFor("the upstream Node Ready", async () => {
        const n = await getJson<
          { status: { conditions: { type: string; status: string }[] } }
        >("node", node);
        return n?.status.conditions.some((c) =>
            c.type === "Ready" && c.status === "True"
          )
          ? true
          : undefined;
      }, 120_000);
      const result = await csiScenario(node, node, `${root}/root`, root);
      // deno-lint-ignore no-console
      console.log(result.calls.join("\n"));
      await Deno.writeTextFile(
        `${RESULTS}-upstream.json`,
        JSON.stringify(result, null, 1),
      );
      const ours = JSON.parse(
        await Deno.readTextFile(`${RESULTS}-kubelet-ts.json`).catch(() =>
          "null"
        ),
      ) as ScenarioResult | null;
      if (ours) {
        assert.deepEqual(ours.csiNodeDriver, result.csiNodeDriver);
        assert.deepEqual(ours.nodeMetadata, result.nodeMetadata);
        const volumeCalls = (r: ScenarioResult) =>
          r.calls.filter((c) =>
            /^Node(Stage|Unstage|Publish|Unpublish)Volume /.test(c)
          ).sort();
        assert.deepEqual(volumeCalls(ours), volumeCalls(result));
      }
    } finally {
      await script("upstream_kubelet.sh", ["down"], env).catch(() => {});
      await kubectl("delete", "namespace", node, "--wait=false").catch(
        () => {},
      );
      await kubectl("delete", "node", node, "--ignore-not-found").catch(
        () => {},
      );
      await removeTree(root).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "kubelet.ts: a claim of a StorageClass is provisioned by the external provisioner, published, and deleted with its data",
  ignore: missing !== undefined || !provisionerPath,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using cri = await privateCri("csip");
    const k = await startApiKubelet("csip", { criEndpoint: cri.endpoint });
    const node = k.node;
    const rootDir = `${k.dir}/root`;
    const driver = `${node}.csi.kts.test`;
    const sc = `${node}-sc`;
    await createObject({
      apiVersion: "storage.k8s.io/v1",
      kind: "CSIDriver",
      metadata: { name: driver },
      spec: { attachRequired: false, podInfoOnMount: true },
    });
    await createObject({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: sc },
      provisioner: driver,
      volumeBindingMode: "Immediate",
      reclaimPolicy: "Delete",
      parameters: { tier: "gold" },
    });
    let pvName = "";
    try {
      await using plugin = startDriver(rootDir, driver, node, k.dir);
      const provisioner = new Deno.Command(provisionerPath!, {
        args: [
          `--kubeconfig=${cluster.kubeconfig}`,
          `--csi-address=${rootDir}/plugins/${driver}/csi.sock`,
          "--leader-election=false",
          "--timeout=30s",
          "--v=2",
        ],
        stdout: "null",
        stderr: "null",
      }).spawn();
      try {
        await waitFor("the driver in the CSINode", async () => {
          const n = await getJson<
            { spec: { drivers: { name: string }[] | null } }
          >("csinode", node);
          return n?.spec.drivers?.find((d) => d.name === driver);
        }, 60_000);
        await createObject({
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: "dyn", namespace: node },
          spec: {
            storageClassName: sc,
            accessModes: ["ReadWriteOnce"],
            resources: { requests: { storage: "1Mi" } },
          },
        });
        const bound = await waitFor(
          "the claim provisioned and bound",
          async () => {
            const c = await getJson<
              { spec: { volumeName?: string }; status?: { phase?: string } }
            >("pvc", "-n", node, "dyn");
            return c?.status?.phase === "Bound" ? c : undefined;
          },
          120_000,
        );
        pvName = bound.spec.volumeName ?? "";
        const pod = pinnedPod("dyn-pod", node, [
          "sh",
          "-c",
          "echo provisioned > /data/out && sleep 3600",
        ], { volumeMounts: [{ name: "data", mountPath: "/data" }] });
        (pod.spec as Record<string, unknown>).volumes = [
          { name: "data", persistentVolumeClaim: { claimName: "dyn" } },
        ];
        await createObject(pod);
        await waitFor("pod Running", async () => {
          const p = await getJson<PodJson>("pod", "-n", node, "dyn-pod");
          return p?.status?.phase === "Running" ? p : undefined;
        }, 120_000);
        const data = `${k.dir}/data/${pvName}/out`;
        await waitFor("the pod's write", async () => {
          const text = await Deno.readTextFile(data).catch(() => "");
          return text === "provisioned\n" ? true : undefined;
        }, 30_000);
        const publish = (await plugin.calls()).find((c) =>
          c.method === "NodePublishVolume"
        );
        assert.equal(publish?.request.volumeId, pvName);
        assert.equal(
          (publish?.request.volumeContext as Record<string, string>)?.tier,
          "gold",
        );
        await kubectl("delete", "pod", "-n", node, "dyn-pod", "--wait=false");
        await waitFor("the volume unpublished", async () => {
          const calls = await plugin.calls();
          return calls.some((c) => c.method === "NodeUnstageVolume")
            ? true
            : undefined;
        }, 120_000);
        await kubectl("delete", "pvc", "-n", node, "dyn", "--wait=false");
        await waitFor("the provisioner's DeleteVolume", async () => {
          const calls = await plugin.calls();
          return calls.some((c) => c.method === "DeleteVolume")
            ? true
            : undefined;
        }, 120_000);
        await assert.rejects(Deno.stat(`${k.dir}/data/${pvName}`));
      } finally {
        provisioner.kill("SIGTERM");
        await provisioner.status;
      }
    } finally {
      if (pvName) {
        await kubectl("delete", "pv", pvName, "--wait=false").catch(() => {});
      }
      await kubectl("delete", "storageclass", sc).catch(() => {});
      await kubectl("delete", "csidriver", driver).catch(() => {});
      await k.stop();
    }
  },
});
