import * as assert from "node:assert/strict";
import { serveCgroupAgent } from "./agent.ts";
import { cgroupAgentClient } from "./client.ts";
import { rootShareExecutor } from "./root_shared_exec.ts";
import { isSharedMount, mountHolding } from "./root_shared.ts";
import { parseMountInfo } from "./volume_tmpfs.ts";
import { runMountCommand } from "./mount_command.ts";

const mounts = async () =>
  parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo"));

/** The mounts exactly at `path`, bottom first. */
async function mountsAt(path: string) {
  return (await mounts()).filter((e) => e.mountPoint === path);
}

/**
 * Runs `fn` with a private tmpfs standing in for the host's private `/` (whatever this
 * machine's `/` is), then detaches everything mounted in it and removes it.
 */
async function withPrivateHost(fn: (host: string) => Promise<void>) {
  const host = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "kts-rs-" });
  try {
    await runMountCommand("mount", ["-t", "tmpfs", "kts-rshared", host]);
    await runMountCommand("mount", ["--make-private", host]);
    await fn(host);
  } finally {
    // a lazy unmount takes the mounts below with it
    await runMountCommand("umount", ["-l", host]).catch(() => {});
    await Deno.remove(host, { recursive: true });
  }
}

Deno.test({
  name:
    "rootShareExecutor() binds a root on a private mount as rshared, once, and refuses over mounts below",
  ignore: Deno.uid() !== 0,
  async fn() {
    await withPrivateHost(async (host) => {
      assert.equal(isSharedMount(mountHolding(await mounts(), host)!), false);
      const root = `${host}/root`;
      await Deno.mkdir(root);
      // given through a link, the real path is shared
      await Deno.symlink(root, `${host}/link`);
      const sharer = rootShareExecutor(`${host}/link`);
      assert.deepEqual(await sharer.shareRootDir(), { action: "share" });
      const at = await mountsAt(root);
      assert.equal(at.length, 1);
      assert.ok(isSharedMount(at[0]!), JSON.stringify(at));
      assert.deepEqual(await mountsAt(`${host}/link`), []);
      // a second start finds it shared and mounts nothing on top
      assert.deepEqual(await rootShareExecutor(root).shareRootDir(), {
        action: "nothing",
        mountPoint: root,
      });
      assert.equal((await mountsAt(root)).length, 1);
      // what propagation is for: a bind of the root (as a runtime makes for a volume with
      // HostToContainer) receives the mounts made below the root later
      await Deno.mkdir(`${host}/view`);
      await runMountCommand("mount", ["--bind", root, `${host}/view`]);
      await Deno.mkdir(`${root}/pods`);
      await runMountCommand("mount", [
        "-t",
        "tmpfs",
        "kts-vol",
        `${root}/pods`,
      ]);
      await Deno.writeTextFile(`${root}/pods/f`, "x");
      assert.equal(await Deno.readTextFile(`${host}/view/pods/f`), "x");

      // a private root with a volume tmpfs below it: refused, nothing mounted
      const busy = `${host}/busy`;
      const volume = `${busy}/pods/u/volumes/kubernetes.io~secret/s`;
      await Deno.mkdir(volume, { recursive: true });
      await runMountCommand("mount", ["-t", "tmpfs", "kts-vol", volume]);
      const plan = await rootShareExecutor(busy).shareRootDir();
      assert.equal(plan.action, "refuse");
      assert.match(plan.action === "refuse" ? plan.reason : "", /secret\/s/);
      assert.deepEqual(await mountsAt(busy), []);

      // a missing root is an error, not a mount
      await assert.rejects(
        rootShareExecutor(`${host}/absent`).shareRootDir(),
        Deno.errors.NotFound,
      );
    });
  },
});

Deno.test({
  name: "the agent's shareRootDir shares its own root dir",
  ignore: Deno.uid() !== 0,
  async fn() {
    await withPrivateHost(async (host) => {
      const rootDir = `${host}/kubelet`;
      await Deno.mkdir(rootDir);
      const socket = `${rootDir}/cgroup-agent.sock`;
      const agent = await serveCgroupAgent({ socket, cgroupRoot: "/h9" });
      const client = cgroupAgentClient(socket);
      try {
        assert.deepEqual(await client.shareRootDir(), { action: "share" });
        const at = await mountsAt(rootDir);
        assert.equal(at.length, 1);
        assert.ok(isSharedMount(at[0]!));
        assert.deepEqual(await client.shareRootDir(), {
          action: "nothing",
          mountPoint: rootDir,
        });
      } finally {
        client.close();
        agent.close();
        await agent.finished;
      }
    });
  },
});
