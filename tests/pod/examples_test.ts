import assert from "node:assert/strict";
import { readYaml } from "../../src/util/yaml.ts";
import { readStaticPods } from "../../src/pod/mod.ts";

const EXAMPLES = new URL("../../examples/", import.meta.url);

Deno.test("examples/manifests are valid static pods", async () => {
  const names: string[] = [];
  for await (const entry of Deno.readDir(new URL("manifests/", EXAMPLES))) {
    const origin = new URL(`manifests/${entry.name}`, EXAMPLES).pathname;
    const { pods, errors } = await readStaticPods(
      await Deno.readTextFile(origin),
      {
        nodeName: "example-node",
        source: "file",
        origin,
      },
    );
    assert.deepEqual(errors.map((e) => e.message), [], origin);
    names.push(...pods.map((p) => p.metadata.name!));
  }
  assert.deepEqual(names.sort(), [
    "crashloop-example-node",
    "httpd-example-node",
    "once-example-node",
    "with-init-example-node",
  ]);
});

Deno.test("examples/kubelet-config.yaml runs the example manifests on the simulated runtime", async () => {
  const config = (await readYaml(
    await Deno.readTextFile(new URL("kubelet-config.yaml", EXAMPLES)),
  )).value as Record<string, string>;
  assert.equal(config.kind, "KubeletConfiguration");
  assert.equal(config.staticPodPath, "./manifests");
  assert.match(String(config.containerRuntimeEndpoint), /^sim:\/\//);
});
