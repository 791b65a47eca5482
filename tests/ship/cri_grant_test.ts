import assert from "node:assert/strict";
import { criNetPermissions } from "../../src/runtime/mod.ts";
import { planPermissions } from "../../src/permissions/mod.ts";
import { defaultKubeletConfiguration } from "../../src/config/mod.ts";
import { defaultKubeletFlags } from "../../src/flags/mod.ts";

Deno.test("planPermissions() grants exactly the net rules the CRI client needs", async () => {
  for (
    const endpoint of [
      "unix:///run/containerd/containerd.sock",
      "unix:/tmp/kts/containerd.sock",
      "/var/run/crio/crio.sock",
    ]
  ) {
    const config = {
      ...defaultKubeletConfiguration(),
      containerRuntimeEndpoint: endpoint,
    };
    const plan = await planPermissions({
      config,
      flags: defaultKubeletFlags(),
    });
    for (const rule of criNetPermissions(endpoint)) {
      assert.ok(plan.net.includes(rule), `${endpoint}: missing ${rule}`);
    }
  }
});
