/**
 * Memory-backed volumes on a private containerd and the local control plane with an
 * in-process kubelet.ts holding every permission (so it mounts itself, through the agent's
 * executor): a pod with a secret volume, a projected service account token and a configMap
 * volume gets a tmpfs on the secret and projected volume directories (seen in the host's
 * mount table) and none on the configMap's; deleting the pod unmounts both. Node and namespace are `h2-mem-<random>`.
 */
import assert from "node:assert/strict";
import { volumeTmpfsExecutor } from "../../src/cgroup_agent/mod.ts";
import {
  apiKubeletMissing,
  createObject,
  pinnedPod,
  startApiKubelet,
} from "./_api_kubelet.ts";
import { getJson, kubectl, waitFor } from "./_cluster.ts";
import { mountsBelow } from "../_mounts.ts";
import { privateCri, privateCriMissing } from "../pod/_containerd_e2e.ts";

const missing = apiKubeletMissing ??
  (privateCriMissing ? "no private containerd (root, cri_env)" : undefined);
// deno-lint-ignore no-console
if (missing) console.log(`skipping memory_volumes_test: ${missing}`);

interface PodJson {
  metadata: { uid: string };
  status?: { phase?: string };
}

Deno.test({
  name:
    "secret and projected volumes are on a tmpfs of their own, a configMap volume is not; deleting the pod unmounts them",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using cri = await privateCri("h2mem");
    const k = await startApiKubelet("h2-mem", {
      criEndpoint: cri.endpoint,
      environment: (rootDir) => ({
        volumeTmpfs: { tmpfs: volumeTmpfsExecutor(rootDir) },
        allocatable: { memoryBytes: 8 << 30 },
      }),
    });
    const ns = k.node;
    const root = `${k.dir}/root`;
    try {
      await createObject({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "creds", namespace: ns },
        stringData: { password: "hunter2" },
      });
      await createObject({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "settings", namespace: ns },
        data: { mode: "fast" },
      });
      const pod = pinnedPod("vols", ns, [
        "sh",
        "-c",
        "cat /s/password /c/mode; sleep 3600",
      ], {
        resources: { limits: { memory: "64Mi" } },
        volumeMounts: [
          { name: "s", mountPath: "/s" },
          { name: "t", mountPath: "/t" },
          { name: "c", mountPath: "/c" },
        ],
      });
      (pod.spec as Record<string, unknown>).volumes = [
        { name: "s", secret: { secretName: "creds" } },
        {
          name: "t",
          projected: {
            sources: [{
              serviceAccountToken: { path: "token", expirationSeconds: 3600 },
            }],
          },
        },
        { name: "c", configMap: { name: "settings" } },
      ];
      await createObject(pod);
      const running = await waitFor("pod Running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "vols");
        return p?.status?.phase === "Running" ? p : undefined;
      }, 90_000);
      const uid = running.metadata.uid;
      const vols = `${root}/pods/${uid}/volumes`;
      const mounts = await mountsBelow(root);
      // deno-lint-ignore no-console
      console.log(
        mounts.map((m) => `${m.type} ${m.path} ${m.options}`).join("\n"),
      );
      const at = (p: string) => mounts.filter((m) => m.path === p);
      assert.equal(at(`${vols}/kubernetes.io~secret/s`)[0]?.type, "tmpfs");
      assert.equal(at(`${vols}/kubernetes.io~projected/t`)[0]?.type, "tmpfs");
      // the pod's memory limit is the size, as upstream
      assert.match(
        at(`${vols}/kubernetes.io~secret/s`)[0]!.options,
        /size=65536k/,
      );
      assert.deepEqual(at(`${vols}/kubernetes.io~configmap/c`), []);
      assert.ok(
        (await Deno.readTextFile(`${vols}/kubernetes.io~projected/t/token`))
          .length > 20,
      );
      assert.equal(
        await Deno.readTextFile(`${vols}/kubernetes.io~secret/s/password`),
        "hunter2",
      );

      await kubectl("delete", "pod", "-n", ns, "vols", "--wait=false");
      await waitFor("the tmpfs unmounted", async () => {
        const left = await mountsBelow(`${root}/pods/${uid}`);
        return left.length === 0 ? true : undefined;
      }, 60_000);
    } finally {
      // a failed run must not leave mounts behind (nor a directory they keep busy)
      for (const m of (await mountsBelow(root)).reverse()) {
        await new Deno.Command("umount", { args: ["-l", m.path] }).output();
      }
      await k.stop();
    }
  },
});
