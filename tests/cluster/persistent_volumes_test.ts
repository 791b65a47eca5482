/**
 * persistentVolumeClaim and generic ephemeral volumes against the local control plane (its PV
 * controller binds the claims) with an in-process kubelet.ts on a private containerd: a pod whose
 * claim does not exist yet waits with reason FailedMount and upstream's text, then starts once
 * the claim is bound to a hostPath PV; a local PV and a read-only claim of the same PV are
 * mounted as upstream mounts them (a write through the read-only claim fails); a generic
 * ephemeral volume's claim, made and bound by the control plane, is mounted too. Node and
 * namespace are `csi-pv-<random>`; the PVs are cluster-scoped and deleted at the end.
 */
import assert from "node:assert/strict";
import {
  apiKubeletMissing,
  createObject,
  pinnedPod,
  startApiKubelet,
} from "./_api_kubelet.ts";
import { getJson, kubectl, waitFor } from "./_cluster.ts";
import { privateCri, privateCriMissing } from "../pod/_containerd_e2e.ts";
import { claimObject, onNode, volumeObject } from "./_persistent_volumes.ts";

const missing = apiKubeletMissing ??
  (privateCriMissing ? "no private containerd (root, cri_env)" : undefined);
// deno-lint-ignore no-console
if (missing) console.log(`skipping persistent_volumes_test: ${missing}`);

interface PodJson {
  metadata: { uid: string };
  status?: {
    phase?: string;
    containerStatuses?: {
      name: string;
      state?: { waiting?: { reason?: string; message?: string } };
    }[];
  };
}

Deno.test({
  name:
    "claims wait with FailedMount until bound, then hostPath and local PVs are mounted, read-only claims read-only",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using cri = await privateCri("csipv");
    const k = await startApiKubelet("csi-pv", { criEndpoint: cri.endpoint });
    const ns = k.node;
    const hostDir = `${k.dir}/host-pv`;
    const localDir = `${k.dir}/local-pv`;
    await Deno.mkdir(localDir);
    const pvs = [`${ns}-host`, `${ns}-local`, `${ns}-eph`];
    try {
      const pod = pinnedPod("writer", ns, [
        "sh",
        "-c",
        "echo from-pod > /data/out && echo local > /local/out && " +
        "if echo x 2>/dev/null > /ro/denied; then echo writable; else echo refused; fi; sleep 3600",
      ], {
        volumeMounts: [
          { name: "data", mountPath: "/data" },
          { name: "ro", mountPath: "/ro" },
          { name: "local", mountPath: "/local" },
        ],
      });
      (pod.spec as Record<string, unknown>).volumes = [
        { name: "data", persistentVolumeClaim: { claimName: "data" } },
        {
          name: "ro",
          persistentVolumeClaim: { claimName: "data", readOnly: true },
        },
        { name: "local", persistentVolumeClaim: { claimName: "local" } },
      ];
      await createObject(pod);
      const waiting = await waitFor(
        "the pod waiting on its claims",
        async () => {
          const p = await getJson<PodJson>("pod", "-n", ns, "writer");
          const w = p?.status?.containerStatuses?.[0]?.state?.waiting;
          return w?.reason === "FailedMount" ? w : undefined;
        },
        60_000,
      );
      assert.equal(
        waiting.message,
        `Unable to attach or mount volumes: unmounted volumes=[data local ro], unattached volumes=[], failed to process volumes=[data local ro]: error processing PVC ${ns}/data: failed to fetch PVC from API server: persistentvolumeclaims "data" not found; error processing PVC ${ns}/data: failed to fetch PVC from API server: persistentvolumeclaims "data" not found; error processing PVC ${ns}/local: failed to fetch PVC from API server: persistentvolumeclaims "local" not found`,
      );

      await createObject(volumeObject(pvs[0]!, ns, "data", {
        hostPath: { path: hostDir, type: "DirectoryOrCreate" },
      }));
      await createObject(volumeObject(pvs[1]!, ns, "local", {
        local: { path: localDir },
        nodeAffinity: onNode(ns),
      }));
      await createObject(claimObject(ns, "data", pvs[0]!));
      await createObject(claimObject(ns, "local", pvs[1]!));
      await waitFor("pod Running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "writer");
        return p?.status?.phase === "Running" ? p : undefined;
      }, 120_000);
      const logs = await waitFor("the pod's output", async () => {
        const out = await kubectl("logs", "-n", ns, "writer");
        return out.trim() ? out : undefined;
      }, 30_000);
      assert.equal(logs.trim(), "refused");
      assert.equal(await Deno.readTextFile(`${hostDir}/out`), "from-pod\n");
      assert.equal(await Deno.readTextFile(`${localDir}/out`), "local\n");
      await assert.rejects(Deno.stat(`${hostDir}/denied`));
      await kubectl("delete", "pod", "-n", ns, "writer", "--wait=false");
      await waitFor("pod gone", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "writer");
        return p ? undefined : true;
      }, 60_000);
      // the data stays on the volume: a PV outlives its pods
      assert.equal(await Deno.readTextFile(`${hostDir}/out`), "from-pod\n");

      // a generic ephemeral volume: the control plane's ephemeral controller makes the claim
      // `<pod>-<volume>` owned by the pod, its PV controller binds it to this PV
      const ephDir = `${k.dir}/eph-pv`;
      await createObject(volumeObject(pvs[2]!, ns, "eph-scratch", {
        hostPath: { path: ephDir, type: "DirectoryOrCreate" },
      }));
      const eph = pinnedPod("eph", ns, [
        "sh",
        "-c",
        "echo scratch > /s/out; sleep 3600",
      ], { volumeMounts: [{ name: "scratch", mountPath: "/s" }] });
      (eph.spec as Record<string, unknown>).volumes = [{
        name: "scratch",
        ephemeral: {
          volumeClaimTemplate: {
            spec: {
              storageClassName: "",
              accessModes: ["ReadWriteOnce"],
              resources: { requests: { storage: "1Mi" } },
            },
          },
        },
      }];
      await createObject(eph);
      await waitFor("the ephemeral volume's pod Running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "eph");
        return p?.status?.phase === "Running" ? p : undefined;
      }, 120_000);
      await waitFor("the write to the ephemeral volume", async () => {
        const text = await Deno.readTextFile(`${ephDir}/out`).catch(() => "");
        return text === "scratch\n" ? true : undefined;
      }, 30_000);
    } finally {
      await k.stop();
      for (const pv of pvs) {
        await kubectl("delete", "pv", pv, "--wait=false").catch(() => {});
      }
    }
  },
});
