import assert from "node:assert/strict";
import { startHarness } from "./_harness.ts";

// Static pod manifests are read like the upstream kubelet reads them, with
// sigs.k8s.io/yaml (go-yaml v2): `yes`/`on` are true and `no`/`off` false.
function manifest(name: string, hostNetwork: string): string {
  return [
    "apiVersion: v1",
    "kind: Pod",
    "metadata:",
    `  name: ${name}`,
    "spec:",
    `  hostNetwork: ${hostNetwork}`,
    "  terminationGracePeriodSeconds: 5",
    "  containers:",
    "  - name: app",
    "    image: kts.local/busybox:latest",
    "    imagePullPolicy: IfNotPresent",
    '    command: ["sleep", "3600"]',
    "",
  ].join("\n");
}

Deno.test("a static pod with hostNetwork: yes runs host-network; one with hostNetwork: off does not", async () => {
  await using h = await startHarness({
    manifests: {
      "host.yaml": manifest("host", "yes"),
      "own.yaml": manifest("own", "off"),
    },
  });
  await h.settle();
  const sandboxes = new Map(
    [...h.runtime.sandboxes.values()].map((s) => [s.metadata.name, s]),
  );
  assert.equal(sandboxes.get("host-node1")?.hostNetwork, true);
  assert.equal(sandboxes.get("own-node1")?.hostNetwork, false);
  assert.equal((await h.containers("host"))[0]?.state, "running");
  assert.equal((await h.containers("own"))[0]?.state, "running");
});
