/**
 * emptyDir sizeLimit eviction on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh; skipped without it): pods that write 2 MiB into a disk and a
 * `medium: Memory` emptyDir limited to 1Mi end Failed with reason Evicted and upstream's
 * message, their containers stopped, within one eviction monitoring period (10 s) of the
 * write; so does a pod whose container writes 2 MiB into its writable layer past a 1Mi
 * `ephemeral-storage` limit (measured through CRI container stats); a pod that stays under
 * its limit keeps running.
 */
import assert from "node:assert/strict";
import {
  endpoint,
  running,
  shContainer,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

const WRITE_2MI =
  "dd if=/dev/zero of=/scratch/big bs=1024 count=2048 2>/dev/null; sleep 3600";

Deno.test({
  name:
    "containerd: pods writing past an emptyDir sizeLimit (disk, Memory) or a container ephemeral-storage limit are evicted",
  ignore: !endpoint,
  async fn() {
    const memoryDir = `/dev/shm/kts-h7-${crypto.randomUUID().slice(0, 8)}`;
    await using e = await startE2e({
      rootDir: true,
      memoryVolumeDir: memoryDir,
    });
    try {
      const pods = {
        disk: { sizeLimit: "1Mi" },
        memory: { medium: "Memory", sizeLimit: "1Mi" },
        small: { sizeLimit: "1Mi" },
      };
      for (const [name, emptyDir] of Object.entries(pods)) {
        await e.write(`${name}.yaml`, {
          metadata: { name },
          spec: {
            terminationGracePeriodSeconds: 1,
            volumes: [{ name: "scratch", emptyDir }],
            containers: [shContainer(
              "writer",
              name === "small"
                ? "echo tiny > /scratch/f; sleep 3600"
                : WRITE_2MI,
              { volumeMounts: [{ name: "scratch", mountPath: "/scratch" }] },
            )],
          },
        });
      }
      const message =
        'Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ';
      // a container's writable layer counts against its ephemeral-storage limit (CRI stats)
      await e.write("rootfs.yaml", {
        metadata: { name: "rootfs" },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [shContainer(
            "writer",
            "dd if=/dev/zero of=/big bs=1024 count=2048 2>/dev/null; sleep 3600",
            { resources: { limits: { "ephemeral-storage": "1Mi" } } },
          )],
        },
      });
      for (const name of ["disk", "memory"]) {
        const evicted = await waitFor(
          `${name}: phase Failed, reason Evicted`,
          () =>
            e.statuses(name).find((s) =>
              s.phase === "Failed" && s.reason === "Evicted"
            ),
          45_000,
        );
        assert.equal(evicted.message, message);
        await waitFor(
          `${name}: its container stopped`,
          async () =>
            (await e.containers(name)).length > 0 &&
              running(await e.containers(name)).length === 0 ||
            undefined,
          30_000,
        );
      }
      const rootfs = await waitFor(
        "rootfs: phase Failed, reason Evicted",
        () =>
          e.statuses("rootfs").find((s) =>
            s.phase === "Failed" && s.reason === "Evicted"
          ),
        45_000,
      );
      assert.equal(
        rootfs.message,
        "Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. ",
      );
      const small = e.statuses("small").at(-1);
      assert.equal(small?.phase, "Running");
      assert.equal(running(await e.containers("small")).length, 1);
    } finally {
      await Deno.remove(memoryDir, { recursive: true }).catch(() => {});
    }
  },
});
