/**
 * End to end through `main.ts` as a subprocess: `--dry-run` with the kubeadm
 * fixture, and a failing run's single "command failed" line and exit code.
 */
import assert from "node:assert/strict";
import { readYaml } from "../../src/util/yaml.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function main(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

Deno.test("main.ts --dry-run --config kubeadm_config.yaml prints the effective config", async () => {
  const r = await main([
    "--dry-run",
    "--config",
    "tests/fixtures/kubeadm_config.yaml",
    "--max-pods=64",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = (await readYaml(r.stdout)).value as Record<
    string,
    unknown
  >;
  assert.equal(doc.kind, "KubeletConfiguration");
  assert.equal(doc.cgroupDriver, "systemd");
  assert.deepEqual(doc.clusterDNS, ["10.96.0.10"]);
  assert.equal(doc.staticPodPath, "/etc/kubernetes/manifests");
  assert.equal(doc.maxPods, 64);
  assert.equal(doc.syncFrequency, "1m0s", "zero durations are re-defaulted");
  assert.equal(
    doc.containerRuntimeEndpoint,
    "unix:///run/containerd/containerd.sock",
  );
  assert.equal((doc.authorization as Record<string, unknown>).mode, "Webhook");
  assert.match(r.stderr, /Flag --max-pods has been deprecated/);
  assert.doesNotMatch(r.stderr, /command failed/);
});

Deno.test("main.ts with a bad flag exits 1 with one 'command failed' line", async () => {
  const r = await main(["--dry-run", "--max-pods=many"]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1);
  assert.match(
    lines[0] ?? "",
    /^E\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] "command failed" err="failed to parse kubelet flag: invalid argument \\"many\\" for \\"--max-pods\\" flag: strconv.ParseInt: parsing \\"many\\": invalid syntax"$/,
  );
});
