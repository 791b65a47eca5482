import assert from "node:assert/strict";
import { pairFileName, planCurrentPair, storePair } from "./cert_pair_store.ts";

Deno.test("planCurrentPair links when it may, else writes through upstream's link", () => {
  const link = {
    isSymlink: true as const,
    target: "/pki/kubelet-client-1.pem",
  };
  assert.deepEqual(planCurrentPair(link, true, "/pki"), { kind: "symlink" });
  assert.deepEqual(planCurrentPair(undefined, true, "/pki"), {
    kind: "symlink",
  });
  assert.deepEqual(planCurrentPair(link, false, "/pki/"), {
    kind: "through",
    target: "/pki/kubelet-client-1.pem",
  });
  // a link out of the cert dir, a plain file or nothing: a copy
  assert.deepEqual(
    planCurrentPair({ isSymlink: true, target: "/pkix/a.pem" }, false, "/pki"),
    { kind: "copy" },
  );
  assert.deepEqual(planCurrentPair({ isSymlink: false }, false, "/pki"), {
    kind: "copy",
  });
  assert.deepEqual(planCurrentPair(undefined, false, "/pki"), { kind: "copy" });
});

Deno.test("pairFileName is upstream's dated name", () => {
  assert.equal(
    pairFileName("kubelet-client", Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
    "kubelet-client-2026-01-02-03-04-05.pem",
  );
});

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "kts-pairs-" }),
  );
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function names(dir: string): Promise<string[]> {
  const out = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test("storePair makes the current name a link to the dated pair, as upstream", async () => {
  await withDir(async (dir) => {
    const t0 = Date.UTC(2026, 0, 1);
    await storePair(dir, "kubelet-client", "ONE\n", t0, { canSymlink: true });
    const current = `${dir}/kubelet-client-current.pem`;
    assert.ok((await Deno.lstat(current)).isSymlink);
    assert.equal(
      await Deno.readLink(current),
      `${dir}/${pairFileName("kubelet-client", t0)}`,
    );
    // a renewal moves the link; the staging name is gone
    const t1 = t0 + 86_400_000;
    await storePair(dir, "kubelet-client", "TWO\n", t1, { canSymlink: true });
    assert.equal(
      await Deno.readLink(current),
      `${dir}/${pairFileName("kubelet-client", t1)}`,
    );
    assert.equal(await Deno.readTextFile(current), "TWO\n");
    assert.deepEqual(await names(dir), [
      pairFileName("kubelet-client", t0),
      pairFileName("kubelet-client", t1),
      "kubelet-client-current.pem",
    ]);
  });
});

Deno.test("storePair without symlinks keeps the upstream kubelet's link and writes through it", async () => {
  await withDir(async (dir) => {
    // the upstream kubelet's layout: a dated pair behind the current link
    const upstream = `${dir}/kubelet-client-2025-01-01-00-00-00.pem`;
    await Deno.writeTextFile(upstream, "UPSTREAM\n");
    const current = `${dir}/kubelet-client-current.pem`;
    await Deno.symlink(upstream, current);
    await storePair(dir, "kubelet-client", "OURS\n", Date.UTC(2026, 0, 1), {
      canSymlink: false,
    });
    assert.ok((await Deno.lstat(current)).isSymlink, "still a link");
    assert.equal(await Deno.readLink(current), upstream);
    assert.equal(await Deno.readTextFile(current), "OURS\n");
    assert.equal(
      (await Deno.stat(upstream)).mode! & 0o777,
      0o600,
      "the pair is private",
    );
  });
});

Deno.test("storePair without symlinks and without a link writes a plain copy", async () => {
  await withDir(async (dir) => {
    await storePair(dir, "kubelet-server", "PAIR\n", Date.UTC(2026, 0, 1), {
      canSymlink: false,
    });
    const current = `${dir}/kubelet-server-current.pem`;
    assert.ok((await Deno.lstat(current)).isFile);
    assert.equal(await Deno.readTextFile(current), "PAIR\n");
  });
});
