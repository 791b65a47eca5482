import assert from "node:assert/strict";
import { podDirFiles } from "./pod_dir_files.ts";

Deno.test("podDirFiles(): <root>/pods/<uid>/userns, written whole, mode 0600", async () => {
  const root = await Deno.makeTempDir({ prefix: "kts-userns-" });
  try {
    const files = podDirFiles(root);
    assert.deepEqual(await files.listPods(), []);
    assert.equal(await files.read("a"), undefined);
    await files.write("a", "one");
    await files.write("a", "two");
    assert.equal(await Deno.readTextFile(`${root}/pods/a/userns`), "two");
    assert.equal(
      (await Deno.stat(`${root}/pods/a/userns`)).mode! & 0o777,
      0o600,
    );
    // no temporary file is left behind
    const names = [];
    for await (const e of Deno.readDir(`${root}/pods/a`)) names.push(e.name);
    assert.deepEqual(names, ["userns"]);
    await Deno.mkdir(`${root}/pods/b`);
    await Deno.writeTextFile(`${root}/pods/not-a-dir`, "");
    assert.deepEqual((await files.listPods()).sort(), ["a", "b"]);
    assert.equal(await files.read("a"), "two");
    await files.remove("a");
    await files.remove("a");
    assert.equal(await files.read("a"), undefined);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
