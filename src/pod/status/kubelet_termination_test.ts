import assert from "node:assert/strict";
import { terminatedByKubeletStatus } from "./kubelet_termination.ts";

Deno.test("terminatedByKubeletStatus() fails a succeeded pod unless asked to keep it", () => {
  const succeeded = { phase: "Succeeded" as const };
  const now = "2026-01-01T00:00:00Z";
  assert.equal(
    terminatedByKubeletStatus(
      succeeded,
      { reason: "Evicted", message: "m" },
      undefined,
      now,
    ).phase,
    "Failed",
  );
  assert.equal(
    terminatedByKubeletStatus(
      succeeded,
      {
        reason: "Terminated",
        message: "m",
        keepSucceeded: true,
      },
      undefined,
      now,
    ).phase,
    "Succeeded",
  );
  assert.equal(
    terminatedByKubeletStatus(
      { phase: "Running" },
      {
        reason: "Terminated",
        message: "m",
        keepSucceeded: true,
      },
      undefined,
      now,
    ).phase,
    "Failed",
  );
});

Deno.test("terminatedByKubeletStatus() keeps the condition's transition time while it holds", () => {
  const previous = {
    phase: "Running" as const,
    conditions: [{
      type: "DisruptionTarget",
      status: "True" as const,
      lastTransitionTime: "2025-01-01T00:00:00Z",
    }],
  };
  const out = terminatedByKubeletStatus(
    { phase: "Running", conditions: previous.conditions },
    { reason: "Terminated", message: "m" },
    previous,
    "2026-01-01T00:00:00Z",
  );
  const target = out.conditions!.filter((c) => c.type === "DisruptionTarget");
  assert.equal(target.length, 1);
  assert.equal(target[0]!.lastTransitionTime, "2025-01-01T00:00:00Z");
});
