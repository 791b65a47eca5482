import assert from "node:assert/strict";
import { pathExists } from "./path_exists.ts";

Deno.test("pathExists() sees files and dangling links, not missing paths", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-exists-" });
  try {
    await Deno.writeTextFile(`${dir}/f`, "x");
    await Deno.symlink(`${dir}/gone`, `${dir}/link`);
    assert.equal(await pathExists(`${dir}/f`), true);
    assert.equal(await pathExists(`${dir}/link`), true);
    assert.equal(await pathExists(`${dir}/gone`), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
