import assert from "node:assert/strict";
import { CaptureLogger } from "../log/testing.ts";
import {
  applyKubeletConfigurationDefaults,
  ConfigError,
  defaultFlagsOnlyKubeletConfiguration,
  type KubeletConfiguration,
  loadConfigFile,
  mergeDropInDirectory,
  mergePatch,
} from "./mod.ts";

const HEADER =
  "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

interface Case {
  conf?: string;
  d10?: string;
  d20?: string;
}

/** Runs the file + drop-in part of upstream's TestMergeKubeletConfigurations. */
async function run(c: Case): Promise<KubeletConfiguration> {
  const dir = await Deno.makeTempDir();
  try {
    const dropIns = `${dir}/kubelet.conf.d`;
    await Deno.mkdir(dropIns);
    if (c.d10 !== undefined) {
      await Deno.writeTextFile(`${dropIns}/10-kubelet.conf`, c.d10);
    }
    if (c.d20 !== undefined) {
      await Deno.writeTextFile(`${dropIns}/20-kubelet.conf`, c.d20);
    }
    let base: KubeletConfiguration;
    if (c.conf !== undefined) {
      await Deno.writeTextFile(`${dir}/kubelet.conf`, c.conf);
      base = await loadConfigFile(`${dir}/kubelet.conf`);
    } else {
      // Flags-only base: v1beta1 defaults plus the legacy flag defaults.
      base = defaultFlagsOnlyKubeletConfiguration();
    }
    return await mergeDropInDirectory(base, dropIns);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("mergeDropInDirectory() case 1: later drop-ins win", async () => {
  const c = await run({
    conf: `${HEADER}port: 9090\nreadOnlyPort: 10257\n`,
    d10: `${HEADER}port: 9090\n`,
    d20: `${HEADER}port: 8080\nreadOnlyPort: 10255\n`,
  });
  assert.equal(c.port, 8080);
  assert.equal(c.readOnlyPort, 10255);
});

Deno.test("mergeDropInDirectory() case 2: maps merge key by key", async () => {
  const c = await run({
    conf:
      `${HEADER}readOnlyPort: 10256\nkubeReserved:\n  memory: 100Mi\nsyncFrequency: 5m\n`,
    d10:
      `${HEADER}readOnlyPort: 10255\nkubeReserved:\n  memory: 150Mi\n  cpu: 200m\n`,
    d20: `${HEADER}readOnlyPort: 10257\nkubeReserved:\n  memory: 100Mi\n`,
  });
  assert.equal(c.readOnlyPort, 10257);
  assert.deepEqual(c.kubeReserved, { cpu: "200m", memory: "100Mi" });
  assert.equal(c.syncFrequency, "5m0s");
});

Deno.test("mergeDropInDirectory() case 3: lists are replaced whole", async () => {
  const c = await run({
    conf: `${HEADER}port: 9090\nclusterDNS: [192.168.1.3, 192.168.1.4]\n`,
    d10: `${HEADER}port: 9090\nsystemReserved:\n  memory: 1Gi\n`,
    d20:
      `${HEADER}port: 8080\nreadOnlyPort: 10255\nsystemReserved:\n  memory: 2Gi\nclusterDNS: [192.168.1.1, 192.168.1.5, 192.168.1.8]\n`,
  });
  assert.equal(c.port, 8080);
  assert.equal(c.readOnlyPort, 10255);
  assert.deepEqual(c.systemReserved, { memory: "2Gi" });
  assert.deepEqual(c.clusterDNS, ["192.168.1.1", "192.168.1.5", "192.168.1.8"]);
});

Deno.test("mergeDropInDirectory() case 4: drop-ins over the flags-only base", async () => {
  // The CLI part (--port=8081 --read-only-port=10256 winning) is tested in src/flags.
  const c = await run({
    d10: `${HEADER}port: 9090\n`,
    d20: `${HEADER}port: 8080\nreadOnlyPort: 10255\n`,
  });
  assert.equal(c.port, 8080);
  assert.equal(c.readOnlyPort, 10255);
  assert.equal(c.authorization.mode, "AlwaysAllow");
  assert.equal(c.authentication.anonymous.enabled, true);
});

Deno.test("mergeDropInDirectory() case 5: no drop-ins keeps the file", async () => {
  const c = await run({
    conf: `${HEADER}port: 9090\nclusterDNS: [192.168.1.3]\n`,
  });
  assert.equal(c.port, 9090);
  assert.deepEqual(c.clusterDNS, ["192.168.1.3"]);
});

Deno.test("mergeDropInDirectory() case 6: zero values are re-defaulted", async () => {
  const c = await run({
    conf: `${HEADER}resolvConf: original\nport: 123\nreadOnlyPort: 234\n`,
    d10: `${HEADER}resolvConf: dropin1\n`,
    d20: `${HEADER}port: 0\n`,
  });
  assert.equal(c.resolvConf, "dropin1");
  assert.equal(c.port, 10250);
  assert.equal(c.readOnlyPort, 234);
});

async function mergeError(c: Case): Promise<ConfigError> {
  try {
    await run(c);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err;
  }
  throw new assert.AssertionError({ message: "expected a ConfigError" });
}

Deno.test("mergeDropInDirectory() case 7: unknown apiVersion", async () => {
  const err = await mergeError({
    conf: HEADER,
    d10:
      "apiVersion: kubelet.config.k8s.io/v1beta2\nkind: KubeletConfiguration\n",
  });
  assert.match(
    err.message,
    /^failed to merge kubelet configs: failed to load kubelet dropin file, path: .*10-kubelet\.conf, unknown apiVersion\/kind: kubelet\.config\.k8s\.io\/v1beta2, Kind=KubeletConfiguration$/,
  );
});

Deno.test("mergeDropInDirectory() case 8: unknown kind", async () => {
  const err = await mergeError({
    conf: HEADER,
    d10:
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration2\n",
  });
  assert.ok(
    err.message.includes(
      "unknown apiVersion/kind: kubelet.config.k8s.io/v1beta1, Kind=KubeletConfiguration2",
    ),
  );
});

Deno.test("mergeDropInDirectory() case 9: missing kind", async () => {
  const err = await mergeError({ conf: HEADER, d10: "port: 123\n" });
  assert.ok(err.message.includes("'Kind' is missing"), err.message);
});

Deno.test("mergeDropInDirectory() case 10: identical file and drop-in", async () => {
  const text = `${HEADER}port: 9091\nsystemReserved:\n  cpu: 100m\n`;
  const c = await run({ conf: text, d10: text });
  assert.equal(c.port, 9091);
  assert.deepEqual(c.systemReserved, { cpu: "100m" });
});

Deno.test("mergeDropInDirectory() walks recursively in lexical order and ignores other files", async () => {
  const dir = await Deno.makeTempDir();
  const cleanup: string[] = [];
  try {
    await Deno.mkdir(`${dir}/a-sub`);
    await Deno.writeTextFile(`${dir}/a-sub/50.conf`, `${HEADER}maxPods: 50\n`);
    await Deno.writeTextFile(`${dir}/b.conf`, `${HEADER}maxPods: 60\n`);
    await Deno.writeTextFile(`${dir}/c.yaml`, `${HEADER}maxPods: 70\n`);
    await Deno.writeTextFile(`${dir}/.hidden.conf`, `${HEADER}port: 1111\n`);
    // A symlinked directory is not followed; a symlinked file is read.
    const outside = await Deno.makeTempDir();
    await Deno.writeTextFile(`${outside}/90.conf`, `${HEADER}maxPods: 90\n`);
    await Deno.symlink(outside, `${dir}/z-linked-dir`);
    await Deno.writeTextFile(`${outside}/file`, `${HEADER}eventBurst: 77\n`);
    await Deno.symlink(`${outside}/file`, `${dir}/0-linked.conf`);
    cleanup.push(outside);
    const base = await applyKubeletConfigurationDefaults({});
    const c = await mergeDropInDirectory(base, dir);
    assert.equal(c.maxPods, 60);
    assert.equal(c.eventBurst, 77);
    assert.equal(c.port, 1111);
    assert.equal(base.maxPods, 110);
  } finally {
    await Deno.remove(dir, { recursive: true });
    for (const d of cleanup) await Deno.remove(d, { recursive: true });
  }
});

Deno.test("mergeDropInDirectory() reports a missing directory, empty and bad files", async () => {
  const base = await applyKubeletConfigurationDefaults({});
  await assert.rejects(mergeDropInDirectory(base, "/nonexistent/kts-dropins"), {
    message:
      'failed to merge kubelet configs: failed to walk through kubelet dropin directory "/nonexistent/kts-dropins": lstat /nonexistent/kts-dropins: no such file or directory',
  });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/10.conf`, "");
    await assert.rejects(mergeDropInDirectory(base, dir), /was empty/);
    await Deno.writeTextFile(`${dir}/10.conf`, `${HEADER}maxPods: many\n`);
    await assert.rejects(
      mergeDropInDirectory(base, dir),
      /failed to unmarshal merged JSON into kubelet configuration: field maxPods: expected an int32/,
    );
    await Deno.writeTextFile(`${dir}/10.conf`, `${HEADER}port: [\n`);
    await assert.rejects(
      mergeDropInDirectory(base, dir),
      /yaml: line \d+, column \d+/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mergePatch() follows RFC 7386", () => {
  assert.deepEqual(
    mergePatch({ a: "b", c: { d: "e", f: "g" } }, { a: "z", c: { f: null } }),
    { a: "z", c: { d: "e" } },
  );
  assert.deepEqual(mergePatch({ a: [1, 2] }, { a: [3] }), { a: [3] });
  assert.deepEqual(mergePatch({ a: { b: 1 } }, { a: 5 }), { a: 5 });
  assert.deepEqual(mergePatch("x", { a: 1 }), { a: 1 });
});

Deno.test("mergeDropInDirectory() applies drop-ins in byte order of their names, as Go's WalkDir", async () => {
  // Go sorts directory entries by comparing the names' bytes: upper case before lower case,
  // "_" between them, and UTF-8 order (code point order) for other characters, which is not
  // JavaScript's UTF-16 order ("\u{1F600}" sorts after "\uFF61" in UTF-8, before it in UTF-16)
  const names = [
    "a.conf",
    "B.conf",
    "_x.conf",
    "Z.conf",
    "0.conf",
    "\u{1F600}.conf",
    "\uFF61.conf",
  ];
  const dir = await Deno.makeTempDir();
  try {
    for (const [i, name] of names.entries()) {
      await Deno.writeTextFile(`${dir}/${name}`, `${HEADER}maxPods: ${i}\n`);
    }
    const logger = new CaptureLogger();
    const base = await applyKubeletConfigurationDefaults({});
    const c = await mergeDropInDirectory(base, dir, { logger });
    const applied = logger.records
      .filter((r) => r.msg === "Merged drop-in kubelet config file")
      .map((r) => String(r.fields.path).slice(dir.length + 1));
    assert.deepEqual(applied, [
      "0.conf",
      "B.conf",
      "Z.conf",
      "_x.conf",
      "a.conf",
      "\uFF61.conf",
      "\u{1F600}.conf",
    ]);
    assert.equal(
      c.maxPods,
      names.indexOf("\u{1F600}.conf"),
      "the last one wins",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
