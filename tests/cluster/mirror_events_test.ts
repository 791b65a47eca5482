/**
 * Mirror pods and events on real containerd and the local control plane, seen through kubectl
 * with the admin kubeconfig: kubelet.ts joins with a static pod in its manifest directory; the
 * mirror pod `<name>-<node>` appears with upstream's annotations and a controller reference to
 * the Node, comes back after `kubectl delete`, is replaced when the manifest is edited and goes
 * when the manifest is removed. `kubectl get events` shows the pod's Pulled ("already present on
 * machine"), Created and Started and the node's Starting, NodeHas... and NodeReady events.
 *
 * The kubelet runs in-process on the shared containerd; its node is `h2-mirror-<random>` and is
 * deleted at the end with the pod's sandboxes and the node's events.
 */
import assert from "node:assert/strict";
import { startApiKubelet } from "./_api_kubelet.ts";
import {
  clusterMissing,
  CRI_ENDPOINT,
  CRI_IMAGE as IMAGE,
  getJson,
  kubectl,
  waitFor,
} from "./_cluster.ts";

interface PodJson {
  metadata: {
    uid: string;
    annotations?: Record<string, string>;
    ownerReferences?: Record<string, unknown>[];
  };
  status?: { phase?: string };
}

interface EventList {
  items: {
    reason: string;
    message: string;
    type: string;
    count?: number;
    source?: { component?: string; host?: string };
    reportingComponent?: string;
    involvedObject: { kind: string; fieldPath?: string; uid?: string };
  }[];
}

function manifest(label: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    edit: "${label}"
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: ${IMAGE}
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
`;
}

Deno.test({
  name:
    "kubelet.ts keeps a mirror pod per static pod and posts pod and node events",
  ignore: clusterMissing !== undefined || CRI_ENDPOINT === "",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "h2-mirror-" });
    const manifests = `${dir}/manifests`;
    await Deno.mkdir(manifests);
    await Deno.writeTextFile(`${manifests}/web.yaml`, manifest("one"));
    const started = Date.now();
    const k = await startApiKubelet("h2-mirror", {
      criEndpoint: CRI_ENDPOINT,
      nodeIP: "127.0.0.1",
      staticPodPath: manifests,
      waitReady: false,
    });
    const node = k.node;
    const mirrorName = `web-${node}`;
    const mirror = () => getJson<PodJson>("pod", "-n", "default", mirrorName);
    const events = async (name: string) =>
      (await getJson<EventList>(
        "events",
        "-n",
        "default",
        "--field-selector",
        `involvedObject.name=${name}`,
      ))?.items ?? [];
    try {
      // The mirror pod, with upstream's annotations and the Node as controller.
      const first = await waitFor("the mirror pod", mirror, 60_000);
      const mirrorMs = Date.now() - started;
      const a = first.metadata.annotations ?? {};
      assert.equal(a["kubernetes.io/config.source"], "file");
      assert.match(a["kubernetes.io/config.hash"] ?? "", /^[0-9a-f]{32}$/);
      assert.equal(
        a["kubernetes.io/config.mirror"],
        a["kubernetes.io/config.hash"],
      );
      assert.ok(a["kubernetes.io/config.seen"]);
      const nodeUid = (await getJson<{ metadata: { uid: string } }>(
        "node",
        node,
      ))!.metadata.uid;
      assert.deepEqual(first.metadata.ownerReferences, [{
        apiVersion: "v1",
        kind: "Node",
        name: node,
        uid: nodeUid,
        controller: true,
      }]);
      // Its status is the static pod's.
      await waitFor(
        "the mirror pod Running",
        async () => (await mirror())?.status?.phase === "Running" || undefined,
        60_000,
      );

      // Deleted: it comes back (the container keeps running).
      const deletedAt = Date.now();
      await kubectl(
        "delete",
        "pod",
        "-n",
        "default",
        mirrorName,
        "--wait=false",
      );
      const back = await waitFor("the mirror pod back", async () => {
        const p = await mirror();
        return p && p.metadata.uid !== first.metadata.uid ? p : undefined;
      }, 30_000);
      const backMs = Date.now() - deletedAt;

      // Manifest edited: the mirror is replaced by one with the new hash.
      await Deno.writeTextFile(`${manifests}/web.yaml`, manifest("two"));
      const edited = await waitFor("the edited mirror pod", async () => {
        const p = await mirror();
        const h = p?.metadata.annotations?.["kubernetes.io/config.mirror"];
        return p && h !== back.metadata.annotations?.[
              "kubernetes.io/config.mirror"
            ]
          ? p
          : undefined;
      }, 30_000);
      assert.equal(
        edited.metadata.annotations?.["kubernetes.io/config.mirror"],
        edited.metadata.annotations?.["kubernetes.io/config.hash"],
      );

      // Pod events: the image was present, the container created and started.
      const podEvents = await waitFor("the pod's events", async () => {
        const list = await events(mirrorName);
        const reasons = new Set(list.map((e) => e.reason));
        return ["Pulled", "Created", "Started"].every((r) => reasons.has(r))
          ? list
          : undefined;
      }, 30_000);
      const pulled = podEvents.find((e) => e.reason === "Pulled")!;
      assert.equal(
        pulled.message,
        `Container image "${IMAGE}" already present on machine`,
      );
      assert.equal(pulled.involvedObject.fieldPath, "spec.containers{app}");
      assert.deepEqual(pulled.source, { component: "kubelet", host: node });
      assert.equal(pulled.reportingComponent, "kubelet");
      assert.ok(
        podEvents.some((e) =>
          e.reason === "Created" && e.message === "Created container: app"
        ),
      );

      // Node events.
      const nodeEvents = await waitFor("the node's events", async () => {
        const list = await events(node);
        const reasons = new Set(list.map((e) => e.reason));
        return ["Starting", "NodeHasSufficientMemory", "NodeReady"].every((r) =>
            reasons.has(r)
          )
          ? list
          : undefined;
      }, 30_000);
      const starting = nodeEvents.find((e) => e.reason === "Starting")!;
      assert.equal(starting.message, "Starting kubelet.");
      assert.equal(starting.involvedObject.uid, node);
      assert.ok(
        nodeEvents.some((e) =>
          e.message === `Node ${node} status is now: NodeHasNoDiskPressure`
        ),
      );

      // Manifest removed: the mirror pod goes.
      await Deno.remove(`${manifests}/web.yaml`);
      await waitFor(
        "the mirror pod gone",
        async () => (await mirror()) === undefined || undefined,
        30_000,
      );
      // deno-lint-ignore no-console
      console.log(
        `mirror pods: start → mirror ${mirrorMs} ms, kubectl delete → back ${backMs} ms; events: ${podEvents.length} pod, ${nodeEvents.length} node`,
      );
    } finally {
      await k.stop();
      await kubectl(
        "delete",
        "pod",
        "-n",
        "default",
        mirrorName,
        "--ignore-not-found",
        "--wait=false",
      ).catch(() => {});
      await kubectl(
        "delete",
        "events",
        "-n",
        "default",
        "--field-selector",
        `involvedObject.name=${mirrorName}`,
      ).catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
