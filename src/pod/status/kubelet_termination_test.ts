import assert from "node:assert/strict";
import { terminatedByKubeletStatus } from "./kubelet_termination.ts";

Deno.test("terminatedByKubeletStatus() is Failed with the reason until the containers' outcome decides", () => {
  const now = "2026-01-01T00:00:00Z";
  const shutdown = { reason: "Terminated", message: "m", keepSucceeded: true };
  const evicted = { reason: "Evicted", message: "e" };
  const view = (s: ReturnType<typeof terminatedByKubeletStatus>) => [
    s.phase,
    s.reason,
    s.message,
    s.conditions?.find((c) => c.type === "DisruptionTarget")?.status,
  ];
  // while the containers run: the status function's Failed and reason
  for (const t of [shutdown, evicted]) {
    assert.deepEqual(
      view(terminatedByKubeletStatus({ phase: "Running" }, t, undefined, now)),
      ["Failed", t.reason, t.message, "True"],
    );
  }
  // stopped with a failure: Failed keeps the reason
  assert.deepEqual(
    view(
      terminatedByKubeletStatus(
        { phase: "Failed" },
        { ...shutdown, phaseAtKill: "Failed" },
        undefined,
        now,
      ),
    ),
    ["Failed", "Terminated", "m", "True"],
  );
  // all exited 0 after the kill began: Succeeded without the reason, condition kept
  for (const t of [shutdown, evicted]) {
    assert.deepEqual(
      view(
        terminatedByKubeletStatus(
          { phase: "Succeeded" },
          { ...t, phaseAtKill: "Failed" },
          undefined,
          now,
        ),
      ),
      ["Succeeded", undefined, undefined, "True"],
    );
  }
  // already Succeeded when a shutdown kill began: stays so, with the reason
  assert.deepEqual(
    view(
      terminatedByKubeletStatus(
        { phase: "Succeeded" },
        shutdown,
        undefined,
        now,
      ),
    ),
    ["Succeeded", "Terminated", "m", "True"],
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
