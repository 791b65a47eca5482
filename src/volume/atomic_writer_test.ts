import assert from "node:assert/strict";
import {
  cleanPayloadPath,
  validatePayloadPath,
  writeAtomically,
} from "./atomic_writer.ts";

Deno.test("writeAtomically() swaps ..data to a new timestamped dir and links each name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const first = new Map([
      ["labels", { data: 'a="1"', mode: 0o644 }],
      ["sub/name", { data: "pod", mode: 0o600 }],
    ]);
    assert.equal(await writeAtomically(dir, first), true);
    const ts1 = await Deno.readLink(`${dir}/..data`);
    assert.match(ts1, /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\./);
    assert.equal(await Deno.readLink(`${dir}/labels`), "..data/labels");
    assert.equal(await Deno.readTextFile(`${dir}/sub/name`), "pod");
    assert.equal((await Deno.stat(`${dir}/sub/name`)).mode! & 0o777, 0o600);
    // unchanged payload: nothing written
    assert.equal(await writeAtomically(dir, first), false);
    assert.equal(await Deno.readLink(`${dir}/..data`), ts1);

    const second = new Map([["labels", { data: 'a="2"', mode: 0o644 }]]);
    assert.equal(await writeAtomically(dir, second), true);
    const ts2 = await Deno.readLink(`${dir}/..data`);
    assert.notEqual(ts2, ts1);
    assert.equal(await Deno.readTextFile(`${dir}/labels`), 'a="2"');
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names.sort(), ["..data", ts2, "labels"].sort());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeAtomically() removes a stale name only when it is its own symlink", async () => {
  const dir = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${outside}/keep`, "x");
    await writeAtomically(dir, new Map([["a", { data: "1", mode: 0o644 }]]));
    await Deno.symlink(outside, `${dir}/planted`);
    await writeAtomically(dir, new Map([["b", { data: "2", mode: 0o644 }]]));
    await assert.rejects(Deno.lstat(`${dir}/a`));
    assert.equal(await Deno.readTextFile(`${outside}/keep`), "x");
    assert.ok((await Deno.lstat(`${dir}/planted`)).isSymlink);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("validatePayloadPath() refuses absolute paths and ..", () => {
  assert.throws(() => validatePayloadPath("/etc/x"), /must be relative path/);
  assert.throws(
    () => validatePayloadPath("a/../../x"),
    /must not contain '\.\.'/,
  );
  assert.throws(
    () => validatePayloadPath("..data"),
    /must not start with '\.\.'/,
  );
  validatePayloadPath("a/b");
});

Deno.test("writeAtomically() in the files layout renames each file into place and switches layouts", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeAtomically(dir, new Map([["a", { data: "1", mode: 0o644 }]]));
    const files = new Map([
      ["a", { data: "2", mode: 0o600 }],
      ["d/b", { data: "3", mode: 0o644 }],
    ]);
    assert.equal(await writeAtomically(dir, files, { layout: "files" }), true);
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names.sort(), ["a", "d"]);
    assert.ok((await Deno.lstat(`${dir}/a`)).isFile);
    assert.equal(await Deno.readTextFile(`${dir}/a`), "2");
    assert.equal((await Deno.stat(`${dir}/a`)).mode! & 0o777, 0o600);
    assert.equal(await writeAtomically(dir, files, { layout: "files" }), false);
    assert.equal(
      await writeAtomically(
        dir,
        new Map([["d/c", { data: "4", mode: 0o644 }]]),
        {
          layout: "files",
        },
      ),
      true,
    );
    await assert.rejects(Deno.lstat(`${dir}/a`));
    await assert.rejects(Deno.lstat(`${dir}/d/b`));
    assert.equal(await Deno.readTextFile(`${dir}/d/c`), "4");
    // and back to upstream's layout
    await writeAtomically(dir, new Map([["d", { data: "5", mode: 0o644 }]]));
    assert.equal(await Deno.readLink(`${dir}/d`), "..data/d");
    assert.equal(await Deno.readTextFile(`${dir}/d`), "5");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeAtomically() writes bytes as given (binaryData, Secret values) in both layouts", async () => {
  for (const layout of ["symlinks", "files"] as const) {
    const dir = await Deno.makeTempDir();
    try {
      // not UTF-8: a text round trip would turn these into U+FFFD
      const bytes = new Uint8Array([0xde, 0xca, 0xfe, 0xba, 0xd0, 0xfe, 0xff]);
      const payload = new Map([["dump.bin", { data: bytes, mode: 0o644 }]]);
      assert.equal(await writeAtomically(dir, payload, { layout }), true);
      assert.deepEqual(await Deno.readFile(`${dir}/dump.bin`), bytes, layout);
      // the same bytes again: nothing to write
      assert.equal(await writeAtomically(dir, payload, { layout }), false);
      const changed = new Map([["dump.bin", {
        data: new Uint8Array([0xff]),
        mode: 0o644,
      }]]);
      assert.equal(await writeAtomically(dir, changed, { layout }), true);
      assert.deepEqual(
        await Deno.readFile(`${dir}/dump.bin`),
        new Uint8Array([0xff]),
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("writeAtomically() rewrites when a key leaves the payload and the others are unchanged, in both layouts", async () => {
  // upstream AtomicWriter.Write: no write only when no file changed and no path is to be removed
  for (const layout of ["symlinks", "files"] as const) {
    const dir = await Deno.makeTempDir();
    try {
      const kept = { data: "keep", mode: 0o644 };
      const both = new Map([["kept", kept], ["revoked", {
        data: "secret",
        mode: 0o644,
      }]]);
      assert.equal(await writeAtomically(dir, both, { layout }), true);
      assert.equal(await Deno.readTextFile(`${dir}/revoked`), "secret");
      const fewer = new Map([["kept", kept]]);
      assert.equal(
        await writeAtomically(dir, fewer, { layout }),
        true,
        `${layout}: a removed key must cause a write`,
      );
      await assert.rejects(
        Deno.lstat(`${dir}/revoked`),
        Deno.errors.NotFound,
        `${layout}: the removed key must be gone`,
      );
      assert.equal(await Deno.readTextFile(`${dir}/kept`), "keep");
      assert.equal(await writeAtomically(dir, fewer, { layout }), false);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("cleanPayloadPath() cleans as upstream and refuses the volume itself and ..-names", () => {
  assert.equal(cleanPayloadPath("./x"), "x");
  assert.equal(cleanPayloadPath("a//b/"), "a/b");
  assert.equal(cleanPayloadPath("a/./b"), "a/b");
  assert.equal(cleanPayloadPath("x..y/..z"), "x..y/..z");
  for (const bad of [".", "./", ".//.", "./..data", "./../x", "/x", ""]) {
    assert.throws(() => cleanPayloadPath(bad), RangeError, bad);
  }
  assert.throws(
    () => cleanPayloadPath(`d/${"n".repeat(256)}`),
    /less than or equal to 255/,
  );
  cleanPayloadPath(`d/${"n".repeat(255)}`);
});

for (const layout of ["symlinks", "files"] as const) {
  Deno.test(`writeAtomically() (${layout}) writes ./x as x and keeps the rest of the volume`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const payload = new Map([
        ["keep", { data: "k", mode: 0o644 }],
        ["./x", { data: "1", mode: 0o644 }],
      ]);
      await writeAtomically(dir, payload, { layout });
      assert.equal(await Deno.readTextFile(`${dir}/x`), "1");
      assert.equal(await Deno.readTextFile(`${dir}/keep`), "k");
      // unchanged in its clean form: nothing rewritten
      assert.equal(await writeAtomically(dir, payload, { layout }), false);
      await assert.rejects(
        writeAtomically(dir, new Map([[".", { data: "", mode: 0o644 }]]), {
          layout,
        }),
        /not the volume itself/,
      );
      assert.equal(await Deno.readTextFile(`${dir}/keep`), "k");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("writeAtomically() in the files layout writes through upstream's links when they cover the payload", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // the upstream kubelet's volume: ..data and a link per name
    await writeAtomically(
      dir,
      new Map([
        ["token", { data: "t1", mode: 0o644 }],
        ["ca.crt", { data: "ca", mode: 0o644 }],
        ["d/x", { data: "x1", mode: 0o644 }],
      ]),
    );
    const data = await Deno.readLink(`${dir}/..data`);
    const next = new Map([
      ["token", { data: "t2", mode: 0o600 }],
      ["d/x", { data: "x2", mode: 0o644 }],
    ]);
    assert.equal(await writeAtomically(dir, next, { layout: "files" }), true);
    // the links and ..data stay; the files behind them changed
    assert.equal(await Deno.readLink(`${dir}/..data`), data);
    assert.equal(await Deno.readLink(`${dir}/token`), "..data/token");
    assert.equal(await Deno.readLink(`${dir}/d`), "..data/d");
    assert.equal(await Deno.readTextFile(`${dir}/token`), "t2");
    assert.equal((await Deno.stat(`${dir}/token`)).mode! & 0o777, 0o600);
    assert.equal(await Deno.readTextFile(`${dir}/d/x`), "x2");
    // a name that left the payload goes with its link
    await assert.rejects(Deno.lstat(`${dir}/ca.crt`));
    await assert.rejects(Deno.lstat(`${dir}/${data}/ca.crt`));
    assert.equal(await writeAtomically(dir, next, { layout: "files" }), false);
    // upstream's layout writer takes it over again as its own
    await writeAtomically(
      dir,
      new Map([["token", { data: "t3", mode: 0o644 }]]),
    );
    assert.equal(await Deno.readLink(`${dir}/token`), "..data/token");
    assert.equal(await Deno.readTextFile(`${dir}/token`), "t3");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
