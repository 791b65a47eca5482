import assert from "node:assert/strict";
import { ownershipMode, setVolumeOwnership } from "./volume_ownership.ts";

Deno.test("ownershipMode() adds group access, and setgid and search for directories", () => {
  assert.equal(
    ownershipMode(0o644, { directory: false, readOnly: false }),
    0o664,
  );
  assert.equal(
    ownershipMode(0o600, { directory: false, readOnly: true }),
    0o640,
  );
  assert.equal(
    ownershipMode(0o777, { directory: true, readOnly: false }),
    0o2777,
  );
  assert.equal(
    ownershipMode(0o755, { directory: true, readOnly: true }),
    0o2755,
  );
});

Deno.test({
  name:
    "setVolumeOwnership() gives the tree to the group and never follows a symlink out",
  ignore: Deno.uid() !== 0,
  async fn() {
    const dir = await Deno.makeTempDir();
    const outside = await Deno.makeTempFile();
    try {
      await Deno.chmod(outside, 0o600);
      await Deno.mkdir(`${dir}/sub`);
      await Deno.writeTextFile(`${dir}/sub/f`, "x", { mode: 0o600 });
      await Deno.chmod(`${dir}/sub/f`, 0o600);
      await Deno.symlink(outside, `${dir}/link`);
      await setVolumeOwnership(dir, 4321, { readOnly: true, recursive: true });
      const f = await Deno.stat(`${dir}/sub/f`);
      assert.equal(f.gid, 4321);
      assert.equal(f.mode! & 0o7777, 0o640);
      assert.equal((await Deno.stat(`${dir}/sub`)).mode! & 0o2000, 0o2000);
      const o = await Deno.stat(outside);
      assert.equal(o.gid, 0);
      assert.equal(o.mode! & 0o7777, 0o600);
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(outside);
    }
  },
});
