/**
 * Device plugins, upstream's kubelet and kubelet.ts side by side: the same scenario
 * (scripts/device_plugin_scenario.sh) with upstream's sample device plugin as a host process,
 * each kubelet on its own runtime-only containerd joined to the control plane. Node capacity and
 * allocatable, the container's device mount, the rejection of a pod asking for more than is
 * free, the plugin going away and the checkpoint must read the same, and as upstream words them.
 * Needs root, the control plane (scripts/cluster_env.sh) and the peers; skips otherwise.
 */
import assert from "node:assert/strict";
import { clusterMissing, script } from "./_cluster.ts";

const missing = clusterMissing ??
  (Deno.uid() === 0 ? undefined : "needs root (containerd, mount namespaces)");
// deno-lint-ignore no-console
if (missing) console.log(`skipping device_plugin_diff_test: ${missing}`);

Deno.test({
  name:
    "device plugins: upstream's kubelet and kubelet.ts report, allocate and refuse the sample plugin's devices alike",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // one after the other: never two kubelets with their containerds at once
    const upstream = await script("device_plugin_scenario.sh", ["upstream"]);
    const ours = await script("device_plugin_scenario.sh", ["kubelet.ts"]);
    assert.deepEqual(upstream, {
      CAPACITY: "2",
      ALLOCATABLE: "2",
      FITS_PHASE: "Running",
      FITS_TMP: "1 Dev-N",
      FITS_MOUNTS: "/tmp/Dev-N=/tmp/Dev-N:false",
      OVER_PHASE: "Failed",
      OVER_REASON: "UnexpectedAdmissionError",
      OVER_MESSAGE:
        "Pod was rejected: Allocate failed due to requested number of devices unavailable for example.com/resource. Requested: 2, Available: 1, which is unexpected",
      GONE_CAPACITY: "2",
      GONE_ALLOCATABLE: "0",
      CHECKPOINT_RESOURCES: "example.com/resource",
      CHECKPOINT_ENTRIES: "fits/c:example.com/resource:1",
    });
    assert.deepEqual(ours, upstream);
  },
});

Deno.test({
  name:
    "device plugins: a swap to kubelet.ts and back keeps the running container's device (the checkpoint in upstream's format)",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const out = await script("device_plugin_scenario.sh", ["swap"]);
    const overMessage =
      "Pod was rejected: Allocate failed due to requested number of devices unavailable for example.com/resource. Requested: 2, Available: 1, which is unexpected";
    for (const prefix of ["TO_TS_", "TO_UPSTREAM_"]) {
      assert.equal(out[`${prefix}ALLOCATABLE`], "2", prefix);
      // the pod admitted again on the new kubelet, its container untouched
      assert.equal(out[`${prefix}FITS_SAME`], "yes", prefix);
      // the new kubelet knows from the checkpoint that one device is taken
      assert.equal(out[`${prefix}OVER_REASON`], "UnexpectedAdmissionError");
      assert.equal(out[`${prefix}OVER_MESSAGE`], overMessage, prefix);
    }
  },
});
