/**
 * `local` PersistentVolumes on block devices against the local control plane with an
 * in-process kubelet.ts on a private containerd and real loop devices: a Filesystem-mode PV on
 * an empty device gets an ext4 file system, is mounted on the pod's local volume directory and
 * taken off when the pod goes, the data staying on the device; a Block-mode PV in
 * `volumeDevices` is the container's device node. Node and namespace are `h3-lblk-<random>`;
 * the PVs are cluster-scoped and deleted at the end.
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
import {
  localBlockExecutor,
  parseMountInfo,
} from "../../src/cgroup_agent/mod.ts";

const missing = apiKubeletMissing ??
  (privateCriMissing ? "no private containerd (root, cri_env)" : undefined);
// deno-lint-ignore no-console
if (missing) console.log(`skipping local_block_volumes_test: ${missing}`);

interface PodJson {
  metadata: { uid: string };
  status?: { phase?: string };
}

async function run(command: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command(command, { args, stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(
      `${command} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return new TextDecoder().decode(out.stdout).trim();
}

const mountsAt = async (path: string) =>
  parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo")).filter((e) =>
    e.mountPoint === path
  );

function localVolume(
  name: string,
  ns: string,
  claimName: string,
  path: string,
  volumeMode: string,
): Record<string, unknown> {
  return volumeObject(name, ns, claimName, {
    volumeMode,
    local: { path, ...(volumeMode === "Filesystem" ? { fsType: "ext4" } : {}) },
    nodeAffinity: onNode(ns),
  });
}

Deno.test({
  name:
    "a local PV on an empty loop device is formatted, mounted for the pod and taken off after it; a Block PV is the container's device",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using cri = await privateCri("h3lblk");
    const k = await startApiKubelet("h3-lblk", {
      criEndpoint: cri.endpoint,
      environment: (rootDir) => ({
        localBlock: { devices: localBlockExecutor(rootDir) },
      }),
    });
    const ns = k.node;
    const loops: string[] = [];
    const pvs = [`${ns}-fs`, `${ns}-raw`];
    const check = `${k.dir}/check`;
    try {
      for (const name of ["fs", "raw"]) {
        const image = `${k.dir}/${name}.img`;
        await Deno.writeFile(image, new Uint8Array());
        await Deno.truncate(image, 32 << 20);
        loops.push(await run("losetup", "--find", "--show", image));
      }
      const [fsDevice, rawDevice] = loops as [string, string];
      await createObject(
        localVolume(pvs[0]!, ns, "fs", fsDevice, "Filesystem"),
      );
      await createObject(localVolume(pvs[1]!, ns, "raw", rawDevice, "Block"));
      await createObject(claimObject(ns, "fs", pvs[0]!, "Filesystem"));
      await createObject(claimObject(ns, "raw", pvs[1]!, "Block"));
      const pod = pinnedPod("disks", ns, [
        "sh",
        "-c",
        "echo on-ext4 > /fs/out && printf raw-data > /dev/xvdb && sleep 3600",
      ], {
        volumeMounts: [{ name: "fs", mountPath: "/fs" }],
        volumeDevices: [{ name: "raw", devicePath: "/dev/xvdb" }],
      });
      (pod.spec as Record<string, unknown>).volumes = [
        { name: "fs", persistentVolumeClaim: { claimName: "fs" } },
        { name: "raw", persistentVolumeClaim: { claimName: "raw" } },
      ];
      await createObject(pod);
      const running = await waitFor("pod Running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "disks");
        return p?.status?.phase === "Running" ? p : undefined;
      }, 120_000);
      const dir =
        `${k.dir}/root/pods/${running.metadata.uid}/volumes/kubernetes.io~local-volume/${
          pvs[0]
        }`;
      const real = await Deno.realPath(dir);
      // the file system went on the device and the device on the pod's directory
      const [mounted] = await mountsAt(real);
      assert.equal(mounted?.fsType, "ext4");
      assert.equal(mounted?.source, fsDevice);
      await waitFor("the pod's writes", async () => {
        const text = await Deno.readTextFile(`${real}/out`).catch(() => "");
        const raw = await Deno.open(rawDevice).then(async (f) => {
          const buf = new Uint8Array(8);
          await f.read(buf);
          f.close();
          return new TextDecoder().decode(buf);
        });
        return text === "on-ext4\n" && raw === "raw-data" ? true : undefined;
      }, 30_000);

      await kubectl("delete", "pod", "-n", ns, "disks", "--wait=false");
      await waitFor("pod gone", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "disks");
        return p ? undefined : true;
      }, 60_000);
      // unmounted before the pod's directories went; the data stays on the device
      await waitFor(
        "the device unmounted",
        async () => (await mountsAt(real)).length === 0 ? true : undefined,
        30_000,
      );
      await Deno.mkdir(check);
      await run("mount", "-o", "ro", fsDevice, check);
      try {
        assert.equal(await Deno.readTextFile(`${check}/out`), "on-ext4\n");
      } finally {
        await run("umount", check);
      }
    } finally {
      // nothing of a failed run may stay mounted below the directory the kubelet removes
      const all = parseMountInfo(
        await Deno.readTextFile("/proc/self/mountinfo"),
      );
      const base = await Deno.realPath(k.dir);
      for (const e of all.reverse()) {
        if (e.mountPoint.startsWith(`${base}/`) && loops.includes(e.source)) {
          await run("umount", "-l", e.mountPoint).catch(() => {});
        }
      }
      await k.stop();
      for (const loop of loops) {
        await run("losetup", "-d", loop).catch(() => {});
      }
      for (const pv of pvs) {
        await kubectl("delete", "pv", pv, "--wait=false").catch(() => {});
      }
    }
  },
});
