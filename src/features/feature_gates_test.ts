import assert from "node:assert/strict";
import { createFeatureGates, FeatureGateError } from "./mod.ts";

Deno.test("FeatureGates.enabled() reports upstream v1.34 defaults", () => {
  const gates = createFeatureGates();
  assert.equal(gates.enabled("GracefulNodeShutdown"), true);
  assert.equal(gates.enabled("NodeLogQuery"), false);
  assert.equal(gates.enabled("KubeletCrashLoopBackOffMax"), false);
  assert.equal(gates.enabled("NodeSwap"), true);
  assert.throws(() => gates.enabled("Nope"), /not registered/);
});

Deno.test("FeatureGates.setFromMap() applies values and returns GA warnings", () => {
  const gates = createFeatureGates();
  const warnings = gates.setFromMap({
    MemoryQoS: true,
    ExecProbeTimeout: true,
  });
  assert.equal(gates.enabled("MemoryQoS"), true);
  assert.deepEqual(warnings, [
    "Setting GA feature gate ExecProbeTimeout=true. It will be removed in a future release.",
  ]);
  assert.deepEqual(
    gates.setFromMap({ AllowDNSOnlyNodeCSR: false }),
    [
      "Setting deprecated feature gate AllowDNSOnlyNodeCSR=false. It will be removed in a future release.",
    ],
  );
});

Deno.test("FeatureGates.setFromMap() rejects unknown and locked gates without changing state", () => {
  const gates = createFeatureGates();
  assert.throws(
    () => gates.setFromMap({ MemoryQoS: true, Foo: true }),
    (err: unknown) =>
      err instanceof FeatureGateError &&
      err.message === "unrecognized feature gate: Foo",
  );
  assert.equal(gates.enabled("MemoryQoS"), false);
  assert.throws(
    () => gates.setFromMap({ NodeSwap: false }),
    {
      message:
        "cannot set feature gate NodeSwap to false, feature is locked to true",
    },
  );
  assert.throws(
    () => gates.setFromMap({ NodeSwap: false, KubeletTracing: false }),
    {
      message:
        "[cannot set feature gate KubeletTracing to false, feature is locked to true, cannot set feature gate NodeSwap to false, feature is locked to true]",
    },
  );
  assert.doesNotThrow(() => gates.setFromMap({ NodeSwap: true }));
});

Deno.test("FeatureGates.setFromMap() handles AllAlpha and AllBeta", () => {
  const gates = createFeatureGates();
  gates.setFromMap({ AllAlpha: true, MemoryQoS: false });
  assert.equal(gates.enabled("CustomCPUCFSQuotaPeriod"), true);
  assert.equal(gates.enabled("MemoryQoS"), false);
  gates.setFromMap({ AllBeta: false });
  assert.equal(gates.enabled("GracefulNodeShutdown"), false);
  assert.equal(gates.enabled("NodeSwap"), true);
});

Deno.test("FeatureGates.clone() is independent", () => {
  const gates = createFeatureGates();
  const copy = gates.clone();
  copy.setFromMap({ MemoryQoS: true });
  assert.equal(gates.enabled("MemoryQoS"), false);
  assert.equal(copy.enabled("MemoryQoS"), true);
});

Deno.test("FeatureGates.knownFeatures() lists non-GA gates sorted with AllAlpha/AllBeta", () => {
  const lines = createFeatureGates().knownFeatures();
  assert.ok(lines.includes("AllAlpha=true|false (ALPHA - default=false)"));
  assert.ok(lines.includes("AllBeta=true|false (BETA - default=false)"));
  assert.ok(lines.includes("NodeLogQuery=true|false (BETA - default=false)"));
  assert.ok(!lines.some((l) => l.startsWith("NodeSwap=")));
  assert.deepEqual([...lines].sort(), lines);
  const beta = lines.indexOf(
    "APIResponseCompression=true|false (BETA - default=true)",
  );
  assert.ok(beta >= 0);
  assert.ok(
    beta < lines.indexOf("AllAlpha=true|false (ALPHA - default=false)"),
  );
  assert.ok(!lines.some((l) => l.startsWith("APIServerTracing=")));
});

Deno.test("FeatureGates knows the whole v1.34 gate set the kubelet binary registers", () => {
  const gates = createFeatureGates();
  // apiserver gates ride along in the kubelet's global gate set.
  assert.doesNotThrow(() =>
    gates.setFromMap({ WatchList: false, CoordinatedLeaderElection: true })
  );
  assert.equal(gates.enabled("KubeletPodResourcesGet"), true);
  assert.equal(gates.enabled("DynamicResourceAllocation"), true);
  // Gates introduced after v1.34 are unknown to a v1.34 kubelet.
  assert.throws(() => gates.setFromMap({ GangScheduling: true }), {
    message: "unrecognized feature gate: GangScheduling",
  });
  assert.throws(() => gates.setFromMap({ KubeletCgroupDriverFromCRI: false }), {
    message:
      "cannot set feature gate KubeletCgroupDriverFromCRI to false, feature is locked to true",
  });
});
