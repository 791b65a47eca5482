/**
 * Flag precedence over `--config` and `--config-dir` (upstream
 * `kubeletConfigFlagPrecedence`, with cases 4 and 5 of server_test.go
 * `TestMergeKubeletConfigurations`): command-line flags win, map flags replace
 * the file's map, feature gates merge per key, CLI-only flags are not
 * re-applied.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCommand, type StartContext } from "../../src/cli/mod.ts";

const HEADER =
  "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

async function withFiles(
  files: Record<string, string>,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kts-cli-" });
  try {
    for (const [name, text] of Object.entries(files)) {
      const path = join(dir, name);
      await Deno.mkdir(join(path, ".."), { recursive: true });
      await Deno.writeTextFile(path, text);
    }
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function run(argv: string[]) {
  let stdout = "";
  let stderr = "";
  let started: StartContext | undefined;
  const code = await runCommand(argv, {
    stdout: (s) => stdout += s,
    stderr: (s) => stderr += s,
    signal: new AbortController().signal,
    start: (ctx) => {
      started = ctx;
      return Promise.resolve(0);
    },
  });
  return { code, stdout, stderr, started };
}

Deno.test("drop-in case 4: no --config, drop-ins, then CLI --port/--read-only-port win", async () => {
  await withFiles({
    "kubelet.conf.d/10-kubelet.conf": HEADER + "port: 9090\n",
    "kubelet.conf.d/20-kubelet.conf": HEADER +
      "port: 8080\nreadOnlyPort: 10255\n",
  }, async (dir) => {
    const r = await run([
      `--config-dir=${join(dir, "kubelet.conf.d")}`,
      "--port=8081",
      "--read-only-port=10256",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.started?.config.port, 8081);
    assert.equal(r.started?.config.readOnlyPort, 10256);
  });
});

Deno.test("drop-in case 4 without CLI flags: the last drop-in wins over flags-mode defaults", async () => {
  await withFiles({
    "d/10-kubelet.conf": HEADER + "port: 9090\n",
    "d/20-kubelet.conf": HEADER + "port: 8080\n",
  }, async (dir) => {
    const r = await run([`--config-dir=${join(dir, "d")}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.started?.config.port, 8080);
    assert.equal(
      r.started?.config.readOnlyPort,
      10255,
      "flags-mode base keeps the legacy default",
    );
  });
});

Deno.test("drop-in case 5: --config plus CLI --cluster-dns replaces the file's list", async () => {
  await withFiles({
    "kubelet.conf": HEADER + "port: 9090\nclusterDNS: [192.168.1.3]\n",
  }, async (dir) => {
    const r = await run([
      `--config=${join(dir, "kubelet.conf")}`,
      "--port=9090",
      "--cluster-dns=192.168.1.2",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.started?.config.port, 9090);
    assert.deepEqual(r.started?.config.clusterDNS, ["192.168.1.2"]);
    assert.equal(
      r.started?.config.readOnlyPort,
      undefined,
      "file mode: no legacy read-only port",
    );
    assert.equal(r.started?.config.authorization?.mode, "Webhook");
  });
});

Deno.test("a map flag replaces the whole map from the file; other fields stay", async () => {
  await withFiles({
    "k.yaml": HEADER +
      "systemReserved: {cpu: 500m, memory: 1Gi}\nmaxPods: 50\n",
  }, async (dir) => {
    const r = await run([
      `--config=${join(dir, "k.yaml")}`,
      "--system-reserved=cpu=1",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.started?.config.systemReserved, { cpu: "1" });
    assert.equal(r.started?.config.maxPods, 50);
  });
});

Deno.test("feature gates from flags override the file's per key; other file gates stay", async () => {
  await withFiles({
    "k.yaml": HEADER +
      "featureGates: {MemoryQoS: true, CustomCPUCFSQuotaPeriod: true}\n",
  }, async (dir) => {
    const r = await run([
      `--config=${join(dir, "k.yaml")}`,
      "--feature-gates=MemoryQoS=false,KubeletPSI=true",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.started?.config.featureGates, {
      MemoryQoS: false,
      KubeletPSI: true,
      CustomCPUCFSQuotaPeriod: true,
    });
    assert.equal(r.started?.featureGates.enabled("MemoryQoS"), false);
    assert.equal(
      r.started?.featureGates.enabled("CustomCPUCFSQuotaPeriod"),
      true,
    );
  });
});

Deno.test("--vmodule appends to the file's vmodule list", async () => {
  await withFiles({
    "k.yaml": HEADER + "logging: {vmodule: [{filePattern: a, verbosity: 1}]}\n",
  }, async (dir) => {
    const r = await run([`--config=${join(dir, "k.yaml")}`, "--vmodule=b=2"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.started?.config.logging?.vmodule, [
      { filePattern: "a", verbosity: 1 },
      { filePattern: "b", verbosity: 2 },
    ]);
  });
});

Deno.test("CLI-only flags come from the first parse; the re-parse prints nothing", async () => {
  await withFiles({ "k.yaml": HEADER }, async (dir) => {
    const r = await run([
      `--config=${join(dir, "k.yaml")}`,
      "--node-labels=a=b",
      "--port=1",
      "--root-dir=/x",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.started?.flags.nodeLabels, { a: "b" });
    assert.equal(r.started?.flags.rootDir, "/x");
    assert.equal(
      r.stderr.split("Flag --port has been deprecated").length - 1,
      1,
    );
  });
});

Deno.test("upstream quirk: a bare cAdvisor bool swallows the next argument in the re-parse", async () => {
  await withFiles({ "k.yaml": HEADER + "port: 9090\n" }, async (dir) => {
    const config = `--config=${join(dir, "k.yaml")}`;
    const swallowed = await run([
      config,
      "--enable-load-reader",
      "--port=8081",
    ]);
    assert.equal(swallowed.code, 0, swallowed.stderr);
    assert.equal(swallowed.started?.config.port, 9090);
    const last = await run([config, "--enable-load-reader"]);
    assert.equal(last.code, 2);
    assert.equal(last.stdout, "flag needs an argument: --enable-load-reader\n");
    assert.equal(last.started, undefined);
  });
});

Deno.test("--config errors name the file and are one 'command failed' line", async () => {
  await withFiles({ "empty.yaml": "" }, async (dir) => {
    const missing = join(dir, "missing.yaml");
    const r = await run([`--config=${missing}`]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `"command failed" err="failed to load kubelet config file, path: ${missing}, error: `,
      ),
    );
    assert.equal(r.stderr.trimEnd().split("\n").length, 1);
    const empty = await run([`--config=${join(dir, "empty.yaml")}`]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /was empty/);
  });
});

Deno.test("--config-dir errors are wrapped as 'failed to merge kubelet configs'", async () => {
  await withFiles({ "d/10.conf": "port: 1\n" }, async (dir) => {
    const r = await run([`--config-dir=${join(dir, "d")}`]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /"command failed" err="failed to merge kubelet configs: /,
    );
  });
});

Deno.test("--help=false and --version=false are inert in the re-parse", async () => {
  await withFiles({ "k.yaml": HEADER + "port: 9090\n" }, async (dir) => {
    const r = await run([
      `--config=${join(dir, "k.yaml")}`,
      "--help=false",
      "--version=false",
      "--port=7",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.started?.config.port, 7);
  });
});
