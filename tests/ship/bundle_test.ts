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
    "bundle: builds offline; kubelet.js runs --version and --dry-run under the compile lists with no network",
  ignore: !CLI_READY || !canUnshareNet(),
  async fn(t) {
    await using layout = await makeLayout();
    // Built with no network at all: the air-gapped path.
    const bundle = await bundleInto(layout.dir, { offline: true });
    const source = await Deno.readTextFile(bundle);
    // One self-contained file: no module left to fetch or read at run time.
    assert.doesNotMatch(source, /from\s+["'](npm:|jsr:|https?:|\.\.?\/)/);
    assert.doesNotMatch(source, /import\(\s*["'](npm:|\.\.?\/)/);

    const run = async (args: string[], denoFlags = layout.denoFlags) => {
      const result = await new Deno.Command("unshare", {
        args: [
          "-n",
          Deno.execPath(),
          "run",
          ...denoFlags,
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
      assert.match(out, /# deno permission: --allow-read=/);
    });
    await t.step(
      "a missing grant stops start-up with the rebuild command",
      async () => {
        const withoutManifests = layout.denoFlags.map((flag) => {
          if (!flag.startsWith("--allow-read=")) return flag;
          const paths = flag.slice("--allow-read=".length).split(",");
          return `--allow-read=${
            paths.filter((p) => p !== layout.manifests).join(",")
          }`;
        });
        assert.notDeepEqual(withoutManifests, layout.denoFlags);
        const { code, err } = await run(layout.kubeletArgs, withoutManifests);
        assert.equal(code, 1, err);
        assert.ok(
          err.includes(
            `--allow-read=${layout.manifests}  (needed by staticPodPath)`,
          ),
          err,
        );
        assert.ok(
          err.includes(`deno task compile --permissions-from ${layout.config}`),
          err,
        );
      },
    );
  },
});
