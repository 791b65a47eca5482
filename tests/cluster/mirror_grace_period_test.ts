/**
 * Upstream's MirrorPodWithGracePeriod on real containerd and the local control plane: a static
 * pod whose container needs 15 s to stop after SIGTERM (grace period 30 s). When its manifest is
 * edited, the old mirror pod stays Running with its UID while the old pod stops, then the new
 * mirror comes; when the manifest is removed, the mirror stays the same way, then goes.
 *
 * The kubelet runs in-process on the shared containerd; its node is `mirror-grace-<random>`.
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
  metadata: { uid: string; annotations?: Record<string, string> };
  status?: { phase?: string };
}

/** How long the container takes to stop after SIGTERM, and how long the test watches. */
const STOP_SECONDS = 15;
const WATCH_MS = 8_000;

function manifest(label: string): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: graceful
  labels:
    edit: "${label}"
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - name: app
    image: ${IMAGE}
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "trap 'sleep ${STOP_SECONDS}; exit 0' TERM; sleep 3600 & wait"]
`;
}

Deno.test({
  name:
    "kubelet.ts keeps a mirror pod Running while its edited or removed static pod stops",
  ignore: clusterMissing !== undefined || CRI_ENDPOINT === "",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "mirror-grace-" });
    const manifests = `${dir}/manifests`;
    await Deno.mkdir(manifests);
    await Deno.writeTextFile(`${manifests}/graceful.yaml`, manifest("one"));
    const k = await startApiKubelet("mirror-grace", {
      criEndpoint: CRI_ENDPOINT,
      nodeIP: "127.0.0.1",
      staticPodPath: manifests,
      waitReady: false,
    });
    const mirrorName = `graceful-${k.node}`;
    const mirror = () => getJson<PodJson>("pod", "-n", "default", mirrorName);
    const running = () =>
      waitFor("the mirror pod Running", async () => {
        const p = await mirror();
        return p?.status?.phase === "Running" ? p : undefined;
      }, 90_000);
    /** The mirror pod stays Running with `uid` for WATCH_MS (upstream's Consistently). */
    const stays = async (uid: string, after: string) => {
      const until = Date.now() + WATCH_MS;
      while (Date.now() < until) {
        const p = await mirror();
        assert.equal(p?.metadata.uid, uid, `mirror pod replaced ${after}`);
        assert.equal(p?.status?.phase, "Running", `mirror pod ${after}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    try {
      const first = await running();
      await Deno.writeTextFile(`${manifests}/graceful.yaml`, manifest("two"));
      await stays(first.metadata.uid, "right after the edit");
      const edited = await waitFor("the edited mirror pod", async () => {
        const p = await mirror();
        return p && p.metadata.uid !== first.metadata.uid &&
            p.status?.phase === "Running"
          ? p
          : undefined;
      }, 90_000);
      assert.notEqual(
        edited.metadata.annotations?.["kubernetes.io/config.mirror"],
        first.metadata.annotations?.["kubernetes.io/config.mirror"],
      );
      await Deno.remove(`${manifests}/graceful.yaml`);
      await stays(edited.metadata.uid, "right after the removal");
      await waitFor(
        "the mirror pod gone",
        async () => (await mirror()) === undefined || undefined,
        90_000,
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
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
