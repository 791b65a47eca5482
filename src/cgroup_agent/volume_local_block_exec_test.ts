import * as assert from "node:assert/strict";
import { serveCgroupAgent } from "./agent.ts";
import { cgroupAgentClient } from "./client.ts";
import { parseMountInfo } from "./volume_tmpfs.ts";

const mounts = async () =>
  parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo"));
const uid1 = "8a3c3f5e-1111-4222-8333-944455556666";
const uid2 = "8a3c3f5e-1111-4222-8333-944455557777";

async function run(command: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command(command, { args, stderr: "inherit" })
    .output();
  if (!out.success) throw new Error(`${command} ${args.join(" ")} failed`);
  return new TextDecoder().decode(out.stdout).trim();
}

/** A loop device over a fresh sparse file; removed after `fn`. */
async function withLoopDevice(
  dir: string,
  name: string,
  fn: (device: string) => Promise<void>,
): Promise<void> {
  const image = `${dir}/${name}.img`;
  await Deno.writeFile(image, new Uint8Array());
  await Deno.truncate(image, 32 << 20);
  const device = await run("losetup", "--find", "--show", image);
  try {
    await fn(device);
  } finally {
    await run("losetup", "-d", device).catch(() => {});
  }
}

Deno.test({
  name:
    "the agent formats an empty local block device once, mounts it per pod and unmounts it",
  ignore: Deno.uid() !== 0,
  async fn() {
    const rootDir = await Deno.realPath(
      await Deno.makeTempDir({ dir: "/var/tmp" }),
    );
    const socket = `${rootDir}/cgroup-agent.sock`;
    const agent = await serveCgroupAgent({ socket, cgroupRoot: "/h9" });
    const client = cgroupAgentClient(socket);
    const dir = (uid: string, pv: string) =>
      `${rootDir}/pods/${uid}/volumes/kubernetes.io~local-volume/${pv}`;
    const at = async (path: string) =>
      (await mounts()).findLast((e) => e.mountPoint === path);
    try {
      await withLoopDevice(rootDir, "disk", async (device) => {
        assert.equal(await client.isBlockDevice(device), true);
        assert.equal(await client.isBlockDevice("/dev/null"), false);
        const disk = { device, fsType: "", readOnly: false };
        await client.mountLocalBlock({ uid: uid1, pv: "pv1" }, disk);
        // ext4 is made (upstream's default type) and mounted on the pod's directory
        const first = await at(dir(uid1, "pv1"));
        assert.equal(first?.fsType, "ext4");
        assert.equal(first?.source, device);
        await Deno.writeTextFile(`${dir(uid1, "pv1")}/from-pod1`, "one");
        // idempotent: no second mount on top
        await client.mountLocalBlock({ uid: uid1, pv: "pv1" }, disk);
        assert.equal(
          (await mounts()).filter((e) => e.mountPoint === dir(uid1, "pv1"))
            .length,
          1,
        );
        // a second pod while the first has it: the same file system, not formatted again
        await client.mountLocalBlock({ uid: uid2, pv: "pv1" }, disk);
        assert.equal(
          await Deno.readTextFile(`${dir(uid2, "pv1")}/from-pod1`),
          "one",
        );
        assert.equal(
          await client.unmountLocalBlock({ uid: uid1, pv: "pv1" }),
          true,
        );
        assert.equal(
          await client.unmountLocalBlock({ uid: uid2, pv: "pv1" }),
          true,
        );
        assert.equal(
          await client.unmountLocalBlock({ uid: uid2, pv: "pv1" }),
          false,
        );
        // mounted again later: formatted already, so the data is still there
        await client.mountLocalBlock({ uid: uid1, pv: "pv1" }, disk);
        assert.equal(
          await Deno.readTextFile(`${dir(uid1, "pv1")}/from-pod1`),
          "one",
        );
        assert.equal(
          await client.unmountLocalBlock({ uid: uid1, pv: "pv1" }),
          true,
        );

        // a device the host has mounted elsewhere is refused
        await Deno.mkdir(`${rootDir}/host-mount`);
        await run("mount", device, `${rootDir}/host-mount`);
        await assert.rejects(
          client.mountLocalBlock({ uid: uid2, pv: "pv1" }, disk),
          (e: Error) =>
            e instanceof Deno.errors.PermissionDenied &&
            /is mounted on ".*host-mount", outside the pods' volume directories/
              .test(e.message),
        );
        await run("umount", `${rootDir}/host-mount`);

        // a symbolic link on the way is refused, nothing is mounted through it
        await Deno.mkdir(`${rootDir}/elsewhere`);
        await Deno.mkdir(
          `${rootDir}/pods/${uid2}/volumes/kubernetes.io~local-volume`,
          {
            recursive: true,
          },
        );
        await Deno.symlink(`${rootDir}/elsewhere`, dir(uid2, "link"));
        await assert.rejects(
          client.mountLocalBlock({ uid: uid2, pv: "link" }, disk),
          (e: Error) =>
            e instanceof Deno.errors.PermissionDenied &&
            /is a symbolic link/.test(e.message),
        );
        assert.equal(await at(`${rootDir}/elsewhere`), undefined);
      });

      // an empty device is not formatted for a read-only claim; a wrong type says so
      await withLoopDevice(rootDir, "empty", async (device) => {
        await assert.rejects(
          client.mountLocalBlock({ uid: uid1, pv: "pv2" }, {
            device,
            fsType: "",
            readOnly: true,
          }),
          /cannot mount unformatted disk .* read-only mode/,
        );
        assert.equal(await at(dir(uid1, "pv2")), undefined);
        // a character device is no local block volume
        await assert.rejects(
          client.mountLocalBlock({ uid: uid1, pv: "pv2" }, {
            device: "/dev/null",
            fsType: "",
            readOnly: false,
          }),
          /local volume \/dev\/null is not a block device/,
        );
      });
    } finally {
      for (const e of (await mounts()).reverse()) {
        if (e.mountPoint.startsWith(rootDir)) {
          await run("umount", "-l", e.mountPoint).catch(() => {});
        }
      }
      client.close();
      agent.close();
      await agent.finished;
      await Deno.remove(rootDir, { recursive: true });
    }
  },
});
