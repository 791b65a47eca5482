import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { Pod } from "../types.ts";
import { createFileSource, removedPaths } from "./file_source.ts";

const pod = (name: string, image = "busybox:1.36") =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: c\n    image: ${image}\n`;

function names(pods: Pod[] | undefined): string[] {
  return (pods ?? []).map((p) => p.metadata.name!).sort();
}

Deno.test("createFileSource().refresh() lists a directory, skipping dotfiles and subdirectories", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a.yaml`, pod("a"));
    await Deno.writeTextFile(
      `${dir}/b.json`,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "b" },
        spec: { containers: [{ name: "c", image: "i" }] },
      }),
    );
    await Deno.writeTextFile(
      `${dir}/multi.yaml`,
      `${pod("m1")}---\n${pod("m2")}`,
    );
    await Deno.writeTextFile(`${dir}/.hidden.yaml`, pod("hidden"));
    await Deno.mkdir(`${dir}/sub`);
    await Deno.writeTextFile(`${dir}/sub/x.yaml`, pod("x"));
    const snapshots: Pod[][] = [];
    const source = createFileSource({
      clock: new FakeClock(),
      logger: new CaptureLogger(),
    }, {
      path: dir,
      nodeName: "node1",
      checkFrequencyMs: 20_000,
      onSnapshot: (p) => snapshots.push(p),
      watch: false,
    });
    const pods = await source.refresh();
    // One pod per file: the second document of multi.yaml is ignored, as
    // upstream's file source decodes a single pod (file.go).
    assert.deepEqual(names(pods), ["a-node1", "b-node1", "m1-node1"]);
    assert.equal(snapshots.length, 1);
    assert.equal(source.name, "file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createFileSource() logs an invalid manifest with its file and field and keeps the others", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/good.yaml`, pod("good"));
    await Deno.writeTextFile(
      `${dir}/bad.yaml`,
      "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: c}]}\n",
    );
    const logger = new CaptureLogger();
    const source = createFileSource({ clock: new FakeClock(), logger }, {
      path: dir,
      nodeName: "n",
      checkFrequencyMs: 1000,
      onSnapshot: () => {},
      watch: false,
    });
    assert.deepEqual(names(await source.refresh()), ["good-n"]);
    const errors = logger.records.filter((r) => r.severity === "error");
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.msg, /bad\.yaml.*spec\.containers\[0\]\.image/);
    // The same problem is not logged again on every listing.
    await source.refresh();
    assert.equal(
      logger.records.filter((r) => r.severity === "error").length,
      1,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createFileSource() rejects a PodList file and drops a second file with a pod name already used", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a.yaml`, pod("web"));
    await Deno.writeTextFile(`${dir}/b.yaml`, pod("web", "nginx:1"));
    await Deno.writeTextFile(
      `${dir}/list.yaml`,
      `apiVersion: v1\nkind: PodList\nitems:\n- ${
        pod("listed").replaceAll("\n", "\n  ").trimEnd()
      }\n`,
    );
    const logger = new CaptureLogger();
    const source = createFileSource({ clock: new FakeClock(), logger }, {
      path: dir,
      nodeName: "n",
      checkFrequencyMs: 1000,
      onSnapshot: () => {},
      watch: false,
    });
    const pods = await source.refresh();
    assert.deepEqual(names(pods), ["web-n"]);
    assert.equal(pods?.[0]?.spec.containers[0]?.image, "busybox:1.36");
    const errors = logger.records.filter((r) => r.severity === "error")
      .map((r) => r.msg);
    assert.equal(errors.length, 2, errors.join("\n"));
    assert.ok(errors.some((m) => /list\.yaml.*not a Pod/.test(m)));
    assert.ok(
      errors.some((m) => /duplicate pod name "web-n", ignoring/.test(m)),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createFileSource() accepts a single file and reports an empty set for a missing path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/only.yaml`, pod("only"));
    const opts = {
      nodeName: "n",
      checkFrequencyMs: 1000,
      onSnapshot: () => {},
      watch: false,
    };
    const deps = { clock: new FakeClock(), logger: new CaptureLogger() };
    assert.deepEqual(
      names(
        await createFileSource(deps, { ...opts, path: `${dir}/only.yaml` })
          .refresh(),
      ),
      ["only-n"],
    );
    assert.deepEqual(
      await createFileSource(deps, { ...opts, path: `${dir}/nope` }).refresh(),
      [],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createFileSource().run() polls every checkFrequency", async () => {
  const dir = await Deno.makeTempDir();
  const clock = new FakeClock();
  const ac = new AbortController();
  try {
    const snapshots: string[][] = [];
    let notify: () => void = () => {};
    const source = createFileSource({ clock, logger: new CaptureLogger() }, {
      path: dir,
      nodeName: "n",
      checkFrequencyMs: 20_000,
      watch: false,
      onSnapshot: (p) => {
        snapshots.push(names(p));
        notify();
      },
    });
    let next = new Promise<void>((r) => (notify = r));
    const running = source.run(ac.signal);
    await next;
    assert.deepEqual(snapshots, [[]]);
    await Deno.writeTextFile(`${dir}/a.yaml`, pod("a"));
    next = new Promise<void>((r) => (notify = r));
    await clock.advance(20_000);
    await next;
    assert.deepEqual(snapshots.at(-1), ["a-n"]);
    ac.abort();
    await running;
  } finally {
    ac.abort();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createFileSource().run() notices new and removed files through the watcher", async () => {
  const dir = await Deno.makeTempDir();
  const ac = new AbortController();
  try {
    let want: string[] = [];
    let notify: () => void = () => {};
    const source = createFileSource({
      clock: new FakeClock(),
      logger: new CaptureLogger(),
    }, {
      path: dir,
      nodeName: "n",
      checkFrequencyMs: 20_000,
      onSnapshot: (p) => {
        if (JSON.stringify(names(p)) === JSON.stringify(want)) notify();
      },
    });
    let reached = new Promise<void>((r) => (notify = r));
    const running = source.run(ac.signal);
    await reached;
    want = ["w-n"];
    reached = new Promise<void>((r) => (notify = r));
    await Deno.writeTextFile(`${dir}/w.yaml`, pod("w"));
    await reached; // the fake clock never moves: only the watcher can trigger this listing
    want = [];
    reached = new Promise<void>((r) => (notify = r));
    await Deno.remove(`${dir}/w.yaml`);
    await reached;
    ac.abort();
    await running;
  } finally {
    ac.abort();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createFileSource().run() reports a removed manifest even when it is written again at once", async () => {
  // upstream's per-event store: the pod stops and starts again (the same UID comes back)
  const dir = await Deno.makeTempDir();
  const ac = new AbortController();
  let guard: ReturnType<typeof setTimeout> | undefined;
  try {
    const seen: string[][] = [];
    let want: string[] = [];
    let notify: () => void = () => {};
    const source = createFileSource({
      clock: new FakeClock(),
      logger: new CaptureLogger(),
    }, {
      path: dir,
      nodeName: "n",
      checkFrequencyMs: 20_000,
      onSnapshot: (p) => {
        seen.push(names(p));
        if (JSON.stringify(names(p)) === JSON.stringify(want)) notify();
      },
    });
    const until = (names: string[]) => {
      want = names;
      return new Promise<void>((resolve, reject) => {
        notify = resolve;
        guard = setTimeout(
          () =>
            reject(
              new Error(
                `no snapshot ${JSON.stringify(names)}: ${JSON.stringify(seen)}`,
              ),
            ),
          20_000,
        );
      }).finally(() => clearTimeout(guard));
    };
    let reached = until([]);
    const running = source.run(ac.signal);
    await reached;
    reached = until(["w-n"]);
    await Deno.writeTextFile(`${dir}/w.yaml`, pod("w"));
    await reached;
    // no turn of the event loop between the two: a listing always finds the file
    reached = until([]);
    Deno.removeSync(`${dir}/w.yaml`);
    Deno.writeTextFileSync(`${dir}/w.yaml`, pod("w"));
    await reached;
    reached = until(["w-n"]);
    await reached;
    ac.abort();
    await running;
  } finally {
    clearTimeout(guard);
    ac.abort();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("removedPaths() takes every removed path and the renamed ones that are gone", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/here.yaml`, "");
    const paths = [`${dir}/here.yaml`, `${dir}/gone.yaml`];
    assert.deepEqual(await removedPaths({ kind: "remove", paths }), paths);
    assert.deepEqual(await removedPaths({ kind: "rename", paths }), [
      `${dir}/gone.yaml`,
    ]);
    assert.deepEqual(await removedPaths({ kind: "create", paths }), []);
    assert.deepEqual(await removedPaths({ kind: "modify", paths }), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createFileSource() decodes a manifest again only when its text changed", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a.yaml`, pod("a"));
    await Deno.writeTextFile(`${dir}/b.yaml`, pod("b"));
    const source = createFileSource({
      clock: new FakeClock(),
      logger: new CaptureLogger(),
    }, {
      path: dir,
      nodeName: "node1",
      checkFrequencyMs: 20_000,
      onSnapshot: () => {},
      watch: false,
    });
    const first = (await source.refresh())!;
    const again = (await source.refresh())!;
    // Unchanged files hand out the very pods of the last listing.
    assert.equal(again[0], first[0]);
    assert.equal(again[1], first[1]);
    // Same length, new image: decoded again.
    await Deno.writeTextFile(`${dir}/a.yaml`, pod("a", "busybox:1.37"));
    const changed = (await source.refresh())!;
    const a = changed.find((p) => p.metadata.name === "a-node1")!;
    assert.equal(a.spec.containers[0]!.image, "busybox:1.37");
    assert.notEqual(a, first.find((p) => p.metadata.name === "a-node1"));
    assert.equal(changed.find((p) => p.metadata.name === "b-node1"), first[1]);
    // Removed and written again with the old text: the old pod, decoded anew.
    await Deno.remove(`${dir}/a.yaml`);
    assert.deepEqual(names(await source.refresh()), ["b-node1"]);
    await Deno.writeTextFile(`${dir}/a.yaml`, pod("a"));
    const back = (await source.refresh())!;
    assert.equal(back[0]!.spec.containers[0]!.image, "busybox:1.36");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
