/**
 * In-place resize on a private containerd (privateCri) and the local control
 * plane, with an in-process kubelet.ts holding every permission and its own cgroup root: after
 * `kubectl patch --subresource resize`, the running container's CFS quota and memory limit and
 * the pod cgroup's follow without a restart; a memory change whose resize policy is
 * RestartContainer restarts the container once. The cgroup files are read on the host.
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
import { readPodEnvironmentOptions } from "../../src/pod/mod.ts";
import { CaptureLogger } from "../../src/log/testing.ts";

const missing = apiKubeletMissing ??
  (privateCriMissing ? "no private containerd (root, cri_env)" : undefined) ??
  (Deno.statSync("/sys/fs/cgroup/cpu").isDirectory
    ? undefined
    : "needs cgroup v1 (the files read here)");
// deno-lint-ignore no-console
if (missing) console.log(`skipping pod_resize_test: ${missing}`);

interface PodJson {
  metadata: { uid: string };
  status?: {
    phase?: string;
    conditions?: { type: string; reason?: string }[];
    containerStatuses?: {
      restartCount: number;
      containerID?: string;
      resources?: { limits?: Record<string, string> };
    }[];
  };
}

const read = async (path: string) => (await Deno.readTextFile(path)).trim();

Deno.test({
  name:
    "a resize changes the container's and the pod cgroup's CFS quota and memory limit in place; RestartContainer restarts it",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cri = await privateCri("rz");
    const endpoint = cri.endpoint;
    const root = `/krz-${crypto.randomUUID().slice(0, 6)}`;
    const environment = await readPodEnvironmentOptions({
      cgroupRoot: root,
      cgroupsPerQOS: true,
      cgroupDriver: "cgroupfs",
    }, { logger: new CaptureLogger(), nodeName: "rz", manageCgroups: true });
    const k = await startApiKubelet("rz", {
      criEndpoint: endpoint,
      resize: true,
      environment: () => environment,
    });
    const ns = k.node;
    try {
      const pod = pinnedPod("rz", ns, ["sh", "-c", "sleep 3600"], {
        resources: {
          requests: { cpu: "100m", memory: "64Mi" },
          limits: { cpu: "200m", memory: "64Mi" },
        },
        resizePolicy: [
          { resourceName: "cpu", restartPolicy: "NotRequired" },
          { resourceName: "memory", restartPolicy: "NotRequired" },
        ],
      });
      await createObject(pod);
      const running = await waitFor("pod Running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "rz");
        return p?.status?.phase === "Running" ? p : undefined;
      }, 120_000);
      const uid = running.metadata.uid;
      const id = running.status!.containerStatuses![0]!.containerID!.split(
        "://",
      )[1]!;
      const podDir = `${root}/kubepods/burstable/pod${uid}`;
      const files = {
        podQuota: `/sys/fs/cgroup/cpu${podDir}/cpu.cfs_quota_us`,
        podMemory: `/sys/fs/cgroup/memory${podDir}/memory.limit_in_bytes`,
        quota: `/sys/fs/cgroup/cpu${podDir}/${id}/cpu.cfs_quota_us`,
        memory: `/sys/fs/cgroup/memory${podDir}/${id}/memory.limit_in_bytes`,
      };
      const snapshot = async () =>
        Object.fromEntries(
          await Promise.all(
            Object.entries(files).map(async ([k, f]) => [k, await read(f)]),
          ),
        );
      const before = await snapshot();
      // deno-lint-ignore no-console
      console.log("before", before);
      assert.deepEqual(before, {
        podQuota: "20000",
        podMemory: String(64 << 20),
        quota: "20000",
        memory: String(64 << 20),
      });

      await kubectl(
        "patch",
        "pod",
        "-n",
        ns,
        "rz",
        "--subresource",
        "resize",
        "--type",
        "strategic",
        "-p",
        JSON.stringify({
          spec: {
            containers: [{
              name: "main",
              resources: {
                requests: { cpu: "100m", memory: "64Mi" },
                limits: { cpu: "300m", memory: "96Mi" },
              },
            }],
          },
        }),
      );
      const after = await waitFor("cgroups resized", async () => {
        const s = await snapshot();
        return s.quota === "30000" && s.podMemory === String(96 << 20)
          ? s
          : undefined;
      }, 60_000);
      // deno-lint-ignore no-console
      console.log("after", after);
      assert.deepEqual(after, {
        podQuota: "30000",
        podMemory: String(96 << 20),
        quota: "30000",
        memory: String(96 << 20),
      });
      const done = await waitFor("resize conditions cleared", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "rz");
        const c = p?.status?.conditions ?? [];
        return c.some((x) => x.type.startsWith("PodResize")) ? undefined : p;
      }, 60_000);
      assert.equal(done.status!.containerStatuses![0]!.restartCount, 0);
      assert.deepEqual(done.status!.containerStatuses![0]!.resources?.limits, {
        cpu: "300m",
        memory: "96Mi",
      });
      const checkpoint = JSON.parse(
        await Deno.readTextFile(`${k.dir}/root/allocated_pods_state`),
      );
      assert.match(checkpoint.data, new RegExp(uid));

      // a second pod whose memory resize policy is RestartContainer
      const restarting = pinnedPod("rz2", ns, ["sh", "-c", "sleep 3600"], {
        resources: {
          requests: { cpu: "100m", memory: "64Mi" },
          limits: { cpu: "200m", memory: "64Mi" },
        },
        resizePolicy: [
          { resourceName: "memory", restartPolicy: "RestartContainer" },
        ],
      });
      await createObject(restarting);
      await waitFor("rz2 Running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "rz2");
        return p?.status?.phase === "Running" ? p : undefined;
      }, 120_000);
      await kubectl(
        "patch",
        "pod",
        "-n",
        ns,
        "rz2",
        "--subresource",
        "resize",
        "--type",
        "strategic",
        "-p",
        JSON.stringify({
          spec: {
            containers: [{
              name: "main",
              resources: {
                requests: { cpu: "100m", memory: "64Mi" },
                limits: { cpu: "200m", memory: "128Mi" },
              },
            }],
          },
        }),
      );
      const restarted = await waitFor("rz2 restarted", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "rz2");
        const s = p?.status?.containerStatuses?.[0];
        const c = p?.status?.conditions ?? [];
        return s?.restartCount === 1 &&
            !c.some((x) => x.type.startsWith("PodResize"))
          ? s
          : undefined;
      }, 90_000);
      const newId = restarted.containerID!.split("://")[1]!;
      const podDir2 = (await getJson<PodJson>("pod", "-n", ns, "rz2"))!
        .metadata.uid;
      assert.equal(
        await read(
          `/sys/fs/cgroup/memory${root}/kubepods/burstable/pod${podDir2}/${newId}/memory.limit_in_bytes`,
        ),
        String(128 << 20),
      );
    } finally {
      await k.stop();
      // the stopped kubelet leaves its containers running: they go with the runtime, then their cgroups
      await cri[Symbol.asyncDispose]();
      await new Deno.Command("sh", {
        args: [
          "-c",
          `for d in /sys/fs/cgroup/*${root}; do find "$d" -depth -type d -exec rmdir {} + ; done`,
        ],
      }).output();
    }
  },
});
