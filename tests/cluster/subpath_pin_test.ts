/**
 * subPath pins and sized Memory emptyDirs on a private containerd and the local control plane
 * with an in-process kubelet.ts holding every permission (it mounts itself, through the
 * agent's executors): a container with a `subPath` restarts again and again while another
 * container of the pod writes the same volume (upstream "should support restarting
 * containers using directory as subpath"), its host path a bind mount under
 * `volume-subpaths`; a `subPath` that the writer made a symlink to `/etc` never starts; a
 * Memory emptyDir with `sizeLimit: 1Mi` is a tmpfs of that size; deleting the pod unmounts
 * everything. Node and namespace are `h2-subpath-<random>`.
 */
import assert from "node:assert/strict";
import {
  subPathBindExecutor,
  volumeTmpfsExecutor,
} from "../../src/cgroup_agent/mod.ts";
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
if (missing) console.log(`skipping subpath_pin_test: ${missing}`);

interface ContainerStatus {
  name: string;
  restartCount: number;
  state: { waiting?: { reason?: string; message?: string } };
}
interface PodJson {
  metadata: { uid: string };
  status?: { phase?: string; containerStatuses?: ContainerStatus[] };
}

Deno.test({
  name:
    "a subPath container restarts beside a writer of its volume through a pin; a symlink out never starts; a Memory emptyDir gets its sized tmpfs",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using cri = await privateCri("h2sub");
    const k = await startApiKubelet("h2-subpath", {
      criEndpoint: cri.endpoint,
      environment: (rootDir) => ({
        volumeTmpfs: { tmpfs: volumeTmpfsExecutor(rootDir) },
        subPathBinds: { binds: subPathBindExecutor(rootDir) },
        allocatable: { memoryBytes: 8 << 30 },
      }),
    });
    const ns = k.node;
    const root = `${k.dir}/root`;
    try {
      const pod = pinnedPod("pins", ns, [
        "sh",
        "-c",
        "while true; do date > /v/dir/f; sleep 1; done",
      ], {
        volumeMounts: [{ name: "v", mountPath: "/v" }],
      });
      const spec = pod.spec as {
        containers: Record<string, unknown>[];
        volumes?: unknown[];
      };
      const base = spec.containers[0]!;
      spec.containers.push({
        ...base,
        name: "restarts",
        command: ["sh", "-c", "cat /d/f; sleep 2; exit 1"],
        volumeMounts: [
          { name: "v", mountPath: "/d", subPath: "dir" },
          { name: "m", mountPath: "/m" },
        ],
      }, {
        ...base,
        name: "escapes",
        command: ["sh", "-c", "ls /e; sleep 3600"],
        volumeMounts: [{ name: "v", mountPath: "/e", subPath: "esc" }],
      });
      // planted before any container starts: the escape is there when "escapes" starts
      (spec as Record<string, unknown>).initContainers = [{
        ...base,
        name: "plant",
        command: ["sh", "-c", "mkdir -p /v/dir; ln -s /etc /v/esc"],
      }];
      spec.volumes = [
        { name: "v", emptyDir: {} },
        { name: "m", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
      ];
      await createObject(pod);
      const status = (p: PodJson | undefined, name: string) =>
        p?.status?.containerStatuses?.find((c) => c.name === name);
      const restarted = await waitFor(
        "two restarts beside the writer",
        async () => {
          const p = await getJson<PodJson>("pod", "-n", ns, "pins");
          return (status(p, "restarts")?.restartCount ?? 0) >= 2
            ? p
            : undefined;
        },
        120_000,
      );
      const uid = restarted.metadata.uid;
      const mounts = await mountsBelow(`${root}/pods/${uid}`);
      // deno-lint-ignore no-console
      console.log(
        mounts.map((m) => `${m.type} ${m.path} ${m.options}`).join("\n"),
      );
      const pins = mounts.filter((m) => m.path.includes("/volume-subpaths/"));
      assert.deepEqual(
        pins.map((m) => m.path.slice(`${root}/pods/${uid}/`.length)),
        ["volume-subpaths/v/restarts/0"],
      );
      const memory = mounts.find((m) =>
        m.path.endsWith("/volumes/kubernetes.io~empty-dir/m")
      );
      assert.equal(memory?.type, "tmpfs");
      assert.match(memory!.options, /size=1024k/);
      const esc = status(restarted, "escapes");
      assert.equal(esc?.state.waiting?.reason, "CreateContainerConfigError");
      assert.match(
        esc?.state.waiting?.message ?? "",
        /failed to prepare subPath for volumeMount "v" of container "escapes"/,
      );

      await kubectl("delete", "pod", "-n", ns, "pins", "--wait=false");
      await waitFor("the pins and the tmpfs unmounted", async () => {
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
