import assert from "node:assert/strict";
import { directorySize, directoryUsage } from "./directory_size.ts";

const onDisk = async (path: string) => {
  const info = await Deno.lstat(path);
  return info.blocks! * 512;
};

Deno.test("directoryUsage() counts blocks on disk of nested entries, each hard-linked file once; a missing path is 0", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a`, "12345");
    await Deno.mkdir(`${dir}/sub/deeper`, { recursive: true });
    await Deno.writeTextFile(`${dir}/sub/deeper/b`, "123");
    await Deno.symlink(`${dir}/a`, `${dir}/link`);
    await Deno.link(`${dir}/a`, `${dir}/sub/hard`);
    const below = (await Promise.all(
      ["a", "link", "sub", "sub/deeper", "sub/deeper/b"].map((p) =>
        onDisk(`${dir}/${p}`)
      ),
    )).reduce((x, y) => x + y);
    // a 5-byte file takes a whole block: du's figure, not the apparent size
    assert.ok(await onDisk(`${dir}/a`) >= 512);
    assert.equal(await directorySize(dir), below);
    // a, link, sub, deeper, b (the second link to a not again)
    assert.deepEqual(await directoryUsage(dir), { bytes: below, inodes: 5 });
    assert.deepEqual(await directoryUsage(dir, { self: true }), {
      bytes: below + await onDisk(dir),
      inodes: 6,
    });
    assert.equal(await directorySize(`${dir}/missing`), 0);
    assert.deepEqual(await directoryUsage(`${dir}/missing`), {
      bytes: 0,
      inodes: 0,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("directoryUsage() counts what a sparse file holds, not its length", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const f = await Deno.open(`${dir}/sparse`, { write: true, create: true });
    await f.truncate(64 * 1024 * 1024);
    f.close();
    const usage = await directoryUsage(dir);
    assert.ok(
      usage.bytes < 1024 * 1024,
      `a 64 MiB hole counted as ${usage.bytes} bytes`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "directoryUsage() does not count a filesystem mounted below",
  ignore: Deno.uid() !== 0,
  async fn() {
    const dir = await Deno.makeTempDir({ dir: "/var/tmp" });
    try {
      await Deno.mkdir(`${dir}/mnt`);
      const mount = await new Deno.Command("mount", {
        args: ["-t", "tmpfs", "-o", "size=8m", "tmpfs", `${dir}/mnt`],
      }).output();
      assert.equal(mount.code, 0);
      try {
        await Deno.writeFile(`${dir}/mnt/big`, new Uint8Array(2 * 1024 * 1024));
        const usage = await directoryUsage(dir);
        assert.ok(
          usage.bytes < 1024 * 1024,
          `the mount's 2 MiB counted: ${usage.bytes}`,
        );
        assert.equal(usage.inodes, 0);
      } finally {
        await new Deno.Command("umount", { args: [`${dir}/mnt`] }).output();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
