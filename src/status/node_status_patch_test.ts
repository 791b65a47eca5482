import assert from "node:assert/strict";
import { applyMergePatch } from "../api/testing.ts";
import { nodeStatusChanged, twoWayPatch } from "./node_status_patch.ts";

Deno.test("twoWayPatch() sends changed keys, nulls removed keys and replaces changed lists", () => {
  const from = {
    status: {
      capacity: { cpu: "2", memory: "1Gi", "hugepages-2Mi": "0" },
      addresses: [{ type: "InternalIP", address: "192.0.2.1" }],
      images: [{ names: ["a"], sizeBytes: 2 }],
      nodeInfo: { bootID: "a", kernelVersion: "6" },
    },
  };
  const to = {
    status: {
      capacity: { cpu: "4", memory: "1Gi" },
      addresses: [{ type: "Hostname", address: "n" }],
      images: [{ names: ["b"], sizeBytes: 3 }, { names: ["a"], sizeBytes: 2 }],
      nodeInfo: { bootID: "a", kernelVersion: "6" },
    },
  };
  const patch = twoWayPatch(from, to);
  // addresses merge by type on the server: replaced with a directive; images are atomic
  assert.deepEqual(patch, {
    status: {
      capacity: { cpu: "4", "hugepages-2Mi": null },
      addresses: [{ type: "Hostname", address: "n" }, { $patch: "replace" }],
      images: [{ names: ["b"], sizeBytes: 3 }, { names: ["a"], sizeBytes: 2 }],
    },
  });
  assert.deepEqual(applyMergePatch(from, patch), to);
  assert.equal(twoWayPatch(from, structuredClone(from)), undefined);
});

Deno.test("nodeStatusChanged() ignores heartbeat times only", () => {
  const base = {
    conditions: [{
      type: "Ready",
      status: "True" as const,
      lastHeartbeatTime: "2026-01-01T00:00:00Z",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    }],
    capacity: { cpu: "1" },
  };
  const beat = structuredClone(base);
  beat.conditions[0]!.lastHeartbeatTime = "2026-01-01T00:00:10Z";
  assert.equal(nodeStatusChanged(base, beat), false);
  const flipped = structuredClone(beat);
  flipped.conditions[0]!.status = "False" as "True";
  assert.equal(nodeStatusChanged(base, flipped), true);
  assert.equal(
    nodeStatusChanged(base, { ...base, capacity: { cpu: "2" } }),
    true,
  );
});
