import assert from "node:assert/strict";
import { denoSubPathFs, resolveSubPath, validateSubPath } from "./subpath.ts";

Deno.test("validateSubPath() refuses absolute paths and .. with upstream's words", () => {
  assert.throws(() => validateSubPath("/etc"), {
    message: "error SubPath `/etc` must not be an absolute path",
  });
  assert.throws(() => validateSubPath("a/../b"), /must not contain '\.\.'/);
  validateSubPath("a/b..c");
});

Deno.test("resolveSubPath() stays inside the volume: in-volume links followed, escapes refused, missing dirs made", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir());
  const vol = `${base}/vol`;
  try {
    await Deno.mkdir(`${vol}/data/inner`, { recursive: true });
    await Deno.writeTextFile(`${base}/secret`, "s");
    await Deno.symlink("data", `${vol}/rel-in`);
    await Deno.symlink(`${vol}/data`, `${vol}/abs-in`);
    await Deno.symlink(base, `${vol}/abs-out`);
    await Deno.symlink("../", `${vol}/rel-out`);
    await Deno.symlink("data/../../secret", `${vol}/sneaky`);
    // a sibling whose name starts with the volume's is still outside
    await Deno.mkdir(`${base}/vol2`);
    await Deno.symlink(`${base}/vol2`, `${vol}/prefix`);
    const ok = async (sub: string, want: string) =>
      assert.equal(
        (await resolveSubPath(denoSubPathFs, vol, sub)).path,
        want,
        sub,
      );
    await ok("data/inner", `${vol}/data/inner`);
    await ok("rel-in/inner", `${vol}/data/inner`);
    await ok("abs-in/inner", `${vol}/data/inner`);
    await ok("new/deeper", `${vol}/new/deeper`);
    assert.ok((await Deno.lstat(`${vol}/new/deeper`)).isDirectory);
    for (
      const sub of [
        "abs-out",
        "rel-out",
        "rel-out/secret",
        "sneaky",
        "abs-out/new",
        "prefix",
      ]
    ) {
      await assert.rejects(
        resolveSubPath(denoSubPathFs, vol, sub),
        /not within volume path/,
        sub,
      );
    }
    // nothing was created outside the volume
    const names = [];
    for await (const e of Deno.readDir(base)) names.push(e.name);
    assert.deepEqual(names.sort(), ["secret", "vol", "vol2"]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
