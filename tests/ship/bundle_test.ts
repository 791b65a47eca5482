import assert from "node:assert/strict";
import {
  bundleInto,
  canUnshareNet,
  CHILD_ENV,
  CLI_READY,
  makeLayout,
} from "./_helpers.ts";

const decoder = new TextDecoder();

Deno.test({
  name:
    "bundle: kubelet.js runs --version and --dry-run under the compile lists with no network",
  ignore: !CLI_READY || !canUnshareNet(),
  async fn(t) {
    await using layout = await makeLayout();
    const bundle = await bundleInto(layout.dir);
    const source = await Deno.readTextFile(bundle);
    // One self-contained file: no module left to fetch or read at run time.
    assert.doesNotMatch(source, /from\s+["'](npm:|jsr:|https?:|\.\.?\/)/);
    assert.doesNotMatch(source, /import\(\s*["'](npm:|\.\.?\/)/);

    const run = async (args: string[]) => {
      const result = await new Deno.Command("unshare", {
        args: [
          "-n",
          Deno.execPath(),
          "run",
          ...layout.denoFlags,
          bundle,
          ...args,
        ],
        cwd: layout.dir,
        env: CHILD_ENV,
        stdout: "piped",
        stderr: "piped",
      }).output();
      return {
        code: result.code,
        out: decoder.decode(result.stdout),
        err: decoder.decode(result.stderr),
      };
    };

    await t.step("--version", async () => {
      const { code, out, err } = await run(["--version"]);
      assert.equal(code, 0, err);
      assert.match(out, /Kubernetes v1\.34/);
    });
    await t.step("--dry-run --config <tmp>", async () => {
      const { code, out, err } = await run([
        ...layout.kubeletArgs,
        "--dry-run",
      ]);
      assert.equal(code, 0, `${out}\n${err}`);
      assert.doesNotMatch(out + err, /NotCapable|Requires \w+ access/);
    });
  },
});
