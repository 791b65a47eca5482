import assert from "node:assert/strict";
import { HttpError } from "../http_error.ts";
import { resolveBelow } from "./safe_open.ts";

/** A root `log` beside a sibling `log.old` that shares its name as a prefix. */
async function logDirWithSibling(): Promise<{ top: string; root: string }> {
  const top = await Deno.realPath(await Deno.makeTempDir());
  const root = `${top}/log`;
  await Deno.mkdir(`${root}/app`, { recursive: true });
  await Deno.mkdir(`${top}/log.old`);
  await Deno.writeTextFile(`${root}/app/current.log`, "inside");
  await Deno.writeTextFile(`${top}/log.old/secret`, "outside");
  return { top, root };
}

Deno.test("resolveBelow() refuses a symlink into a sibling directory whose name starts with the root's", async () => {
  const { top, root } = await logDirWithSibling();
  try {
    await Deno.symlink(`${top}/log.old/secret`, `${root}/escape`);
    await Deno.symlink(`${top}/log.old`, `${root}/escape-dir`);
    for (const path of [`${root}/escape`, `${root}/escape-dir/secret`]) {
      await assert.rejects(
        resolveBelow(root, path),
        (error: unknown) => error instanceof HttpError && error.status === 403,
        `${path} resolves into ${top}/log.old and must be refused`,
      );
    }
  } finally {
    await Deno.remove(top, { recursive: true });
  }
});

Deno.test("resolveBelow() serves the root itself and symlinks that stay inside it", async () => {
  const { top, root } = await logDirWithSibling();
  try {
    await Deno.symlink("app/current.log", `${root}/latest`);
    const inside = await resolveBelow(root, `${root}/latest`);
    assert.equal(inside.realPath, `${root}/app/current.log`);
    assert.ok(inside.info.isFile);
    assert.equal((await resolveBelow(root, root)).realPath, root);
    await assert.rejects(
      resolveBelow(root, `${root}/missing`),
      (error: unknown) => error instanceof HttpError && error.status === 404,
    );
  } finally {
    await Deno.remove(top, { recursive: true });
  }
});
