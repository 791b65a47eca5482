import assert from "node:assert/strict";
import { isCriticalPod, pressureRefusal } from "./admission.ts";
import { evictionPod } from "./testing.ts";

const bestEffort = evictionPod("be");
const burstable = evictionPod("bu", { memoryRequest: "10Mi" });

Deno.test("pressureRefusal() under memory pressure refuses BestEffort pods only", () => {
  assert.deepEqual(pressureRefusal(bestEffort, ["MemoryPressure"]), {
    reason: "Evicted",
    message: "The node had condition: [MemoryPressure]. ",
  });
  assert.equal(pressureRefusal(burstable, ["MemoryPressure"]), undefined);
  assert.equal(pressureRefusal(bestEffort, []), undefined);
});

Deno.test("pressureRefusal() admits a BestEffort pod tolerating the memory-pressure taint", () => {
  const tolerant = evictionPod("t");
  tolerant.spec.tolerations = [{
    key: "node.kubernetes.io/memory-pressure",
    operator: "Exists",
    effect: "NoSchedule",
  }];
  assert.equal(pressureRefusal(tolerant, ["MemoryPressure"]), undefined);
  assert.ok(pressureRefusal(tolerant, ["MemoryPressure", "DiskPressure"]));
});

Deno.test("pressureRefusal() under disk pressure refuses every pod but critical ones", () => {
  assert.deepEqual(
    pressureRefusal(burstable, ["MemoryPressure", "DiskPressure"]),
    {
      reason: "Evicted",
      message: "The node had condition: [MemoryPressure DiskPressure]. ",
    },
  );
  assert.ok(pressureRefusal(burstable, ["DiskPressure"]));
  const critical = evictionPod("c", { priority: 2_000_000_000 });
  assert.equal(pressureRefusal(critical, ["DiskPressure"]), undefined);
});

Deno.test("isCriticalPod() is true for static, mirror and system-critical pods", () => {
  assert.equal(
    isCriticalPod(evictionPod("x", { priority: 1_999_999_999 })),
    false,
  );
  assert.equal(
    isCriticalPod(evictionPod("x", { priority: 2_000_000_000 })),
    true,
  );
  assert.equal(
    isCriticalPod(evictionPod("s", {
      annotations: { "kubernetes.io/config.source": "file" },
    })),
    true,
  );
  assert.equal(
    isCriticalPod(evictionPod("a", {
      annotations: { "kubernetes.io/config.source": "api" },
    })),
    false,
  );
});
