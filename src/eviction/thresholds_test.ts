import assert from "node:assert/strict";
import {
  parseThresholdConfig,
  ThresholdError,
  thresholdQuantity,
} from "./thresholds.ts";

Deno.test("parseThresholdConfig() reads hard and soft thresholds with grace periods and minimum reclaim", () => {
  const t = parseThresholdConfig({
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" },
    evictionSoft: { "memory.available": "300Mi" },
    evictionSoftGracePeriod: { "memory.available": "1m30s" },
    evictionMinimumReclaim: { "memory.available": "50Mi" },
  });
  assert.deepEqual(t.map((x) => [x.signal, x.gracePeriodMs]), [
    ["memory.available", 0],
    ["nodefs.available", 0],
    ["memory.available", 90_000],
  ]);
  assert.deepEqual(t[0]!.value, { quantity: 100 * 2 ** 20, text: "100Mi" });
  assert.deepEqual(t[0]!.minReclaim, { quantity: 50 * 2 ** 20, text: "50Mi" });
  assert.equal(t[1]!.minReclaim, undefined);
  assert.equal(thresholdQuantity(t[1]!.value, 1000), 100);
});

Deno.test("parseThresholdConfig() copies a hard memory.available threshold to allocatableMemory.available with pods enforced", () => {
  const config = {
    evictionHard: { "memory.available": "100Mi" },
    evictionSoft: { "memory.available": "200Mi" },
    evictionSoftGracePeriod: { "memory.available": "10s" },
  };
  const without = parseThresholdConfig(config);
  assert.ok(!without.some((t) => t.signal === "allocatableMemory.available"));
  const withPods = parseThresholdConfig({
    ...config,
    enforceNodeAllocatable: ["pods"],
  });
  const copies = withPods.filter((t) =>
    t.signal === "allocatableMemory.available"
  );
  // only the hard one (upstream `addAllocatableThresholds`)
  assert.deepEqual(copies.map((t) => t.gracePeriodMs), [0]);
});

Deno.test("parseThresholdConfig() ignores 0% and 100% and refuses a soft threshold without a grace period", () => {
  assert.deepEqual(
    parseThresholdConfig({
      evictionHard: { "nodefs.available": "0%", "imagefs.available": "100%" },
    }),
    [],
  );
  assert.throws(
    () => parseThresholdConfig({ evictionSoft: { "memory.available": "1Gi" } }),
    (e: unknown) =>
      e instanceof ThresholdError && e.field === "evictionSoft" &&
      e.message ===
        "grace period must be specified for the soft eviction threshold memory.available",
  );
  assert.throws(
    () => parseThresholdConfig({ evictionHard: { "memory.free": "1Gi" } }),
    /evictionHard|unsupported eviction signal memory.free/,
  );
});

Deno.test("thresholdQuantity() takes a float32 fraction of the capacity", () => {
  const [t] = parseThresholdConfig({
    evictionHard: { "nodefs.available": "10%" },
  });
  // float32(0.1) is a little above 0.1: Go's int64(float64(cap) * float64(float32(0.1)))
  assert.equal(thresholdQuantity(t!.value, 10_000_000_000), 1_000_000_014);
});
