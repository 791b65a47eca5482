import assert from "node:assert/strict";
import { directorySize, directoryUsage } from "./directory_size.ts";

Deno.test("directorySize() sums file sizes in nested directories; a missing path is 0", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a`, "12345");
    await Deno.mkdir(`${dir}/sub/deeper`, { recursive: true });
    await Deno.writeTextFile(`${dir}/sub/deeper/b`, "123");
    await Deno.symlink(`${dir}/a`, `${dir}/link`);
    const link = (await Deno.lstat(`${dir}/link`)).size;
    assert.equal(await directorySize(dir), 8 + link);
    assert.equal(await directorySize(`${dir}/missing`), 0);
    // a, link, sub, deeper, b
    assert.deepEqual(await directoryUsage(dir), { bytes: 8 + link, inodes: 5 });
    assert.deepEqual(await directoryUsage(`${dir}/missing`), {
      bytes: 0,
      inodes: 0,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
