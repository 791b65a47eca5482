/**
 * The harness's host preparation for kubelet.ts (tests/conformance/node.ts). Needs root
 * (it mounts a tmpfs); skips otherwise.
 */
import assert from "node:assert/strict";
import { statfs } from "node:fs/promises";
import { ensureMemoryTmpfs } from "./node.ts";

const TMPFS_MAGIC = 0x01021994;

const mountsOf = async (dir: string) =>
  (await Deno.readTextFile("/proc/mounts")).split("\n").filter((l) =>
    l.split(" ")[1] === dir
  ).length;

Deno.test({
  name:
    "ensureMemoryTmpfs() puts one tmpfs on a directory that is on disk, and only once",
  ignore: Deno.uid() !== 0,
  async fn() {
    const base = await Deno.makeTempDir({ dir: "/var/tmp" });
    const dir = `${base}/kubelet.ts/memory`;
    try {
      assert.notEqual((await statfs(base)).type, TMPFS_MAGIC);
      await ensureMemoryTmpfs(dir);
      await ensureMemoryTmpfs(dir);
      assert.equal((await statfs(dir)).type, TMPFS_MAGIC);
      assert.equal(await mountsOf(dir), 1);
    } finally {
      await new Deno.Command("umount", { args: [dir] }).output();
      await Deno.remove(base, { recursive: true });
    }
  },
});
