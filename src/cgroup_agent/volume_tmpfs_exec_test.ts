import * as assert from "node:assert/strict";
import { serveCgroupAgent } from "./agent.ts";
import { cgroupAgentClient } from "./client.ts";
import { isTmpfsMountPoint, parseMountInfo } from "./volume_tmpfs.ts";

const mounts = async () =>
  parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo"));
const uid = "8a3c3f5e-1111-4222-8333-944455556666";

Deno.test({
  name:
    "the agent mounts a tmpfs only on a real volume directory and unmounts it",
  ignore: Deno.uid() !== 0,
  async fn() {
    const rootDir = await Deno.makeTempDir({ dir: "/var/tmp" });
    const socket = `${rootDir}/cgroup-agent.sock`;
    const agent = await serveCgroupAgent({ socket, cgroupRoot: "/h9" });
    const client = cgroupAgentClient(socket);
    const vols = `${rootDir}/pods/${uid}/volumes`;
    const dir = `${vols}/kubernetes.io~secret/creds`;
    try {
      await Deno.mkdir(dir, { recursive: true });
      const target = { uid, plugin: "kubernetes.io~secret", name: "creds" };
      await client.mountVolumeTmpfs(target, 4 << 20);
      const entry = (await mounts()).findLast((e) => e.mountPoint === dir);
      assert.equal(entry?.fsType, "tmpfs");
      // idempotent: no second mount on top
      await client.mountVolumeTmpfs(target, 4 << 20);
      assert.equal(
        (await mounts()).filter((e) => e.mountPoint === dir).length,
        1,
      );
      // cost of one mount through the agent (reported, not asserted)
      const names = Array.from({ length: 10 }, (_, i) => `m${i}`);
      for (const name of names) {
        await Deno.mkdir(`${vols}/kubernetes.io~projected/${name}`, {
          recursive: true,
        });
      }
      const t0 = performance.now();
      for (const name of names) {
        await client.mountVolumeTmpfs(
          { uid, plugin: "kubernetes.io~projected", name },
          1 << 20,
        );
      }
      const t1 = performance.now();
      for (const name of names) {
        assert.equal(
          await client.unmountVolumeTmpfs({
            uid,
            plugin: "kubernetes.io~projected",
            name,
          }),
          true,
        );
      }
      const t2 = performance.now();
      // deno-lint-ignore no-console
      console.log(
        `agent tmpfs: ${((t1 - t0) / names.length).toFixed(1)} ms per mount, ${
          ((t2 - t1) / names.length).toFixed(1)
        } ms per unmount`,
      );

      assert.equal(await client.unmountVolumeTmpfs(target), true);
      assert.ok(!isTmpfsMountPoint(await mounts(), dir));
      assert.equal(await client.unmountVolumeTmpfs(target), false);

      // a symbolic link anywhere on the way is refused, and nothing is mounted
      const outside = await Deno.makeTempDir({ dir: "/var/tmp" });
      try {
        await Deno.mkdir(`${outside}/kubernetes.io~secret/evil`, {
          recursive: true,
        });
        await Deno.remove(`${vols}/kubernetes.io~projected`, {
          recursive: true,
        });
        await Deno.symlink(outside, `${vols}/kubernetes.io~projected`);
        await Deno.symlink(
          outside,
          `${vols}/kubernetes.io~secret/link`,
        );
        await Deno.symlink(`${outside}/..`, `${rootDir}/pods/u2`);
        for (
          const t of [
            { uid, plugin: "kubernetes.io~projected", name: "m0" },
            { uid, plugin: "kubernetes.io~secret", name: "link" },
            { uid: "u2", plugin: "kubernetes.io~secret", name: "evil" },
          ]
        ) {
          await assert.rejects(
            client.mountVolumeTmpfs(t, 1 << 20),
            Deno.errors.PermissionDenied,
            JSON.stringify(t),
          );
        }
        // a missing directory is not created by the agent
        await assert.rejects(
          client.mountVolumeTmpfs({ ...target, name: "absent" }, 0),
          Deno.errors.NotFound,
        );
        assert.ok(
          !(await mounts()).some((e) =>
            e.mountPoint.startsWith(outside) ||
            e.mountPoint.startsWith(rootDir)
          ),
        );
      } finally {
        await Deno.remove(outside, { recursive: true });
      }
    } finally {
      client.close();
      agent.close();
      await agent.finished;
      for (const e of (await mounts()).reverse()) {
        if (e.mountPoint.startsWith(rootDir + "/")) {
          await new Deno.Command("umount", { args: ["-l", e.mountPoint] })
            .output();
        }
      }
      await Deno.remove(rootDir, { recursive: true });
    }
  },
});
