import assert from "node:assert/strict";
import type { Pod, PodStatus } from "../api/mod.ts";
import { createPodStatusManager, jsonEqual } from "./pod_status_manager.ts";
import type { PodStatusChange } from "./types.ts";

const pod: Pod = {
  metadata: { name: "web", namespace: "default", uid: "u1" },
  spec: { containers: [] },
};

function running(extra: Partial<PodStatus> = {}): PodStatus {
  return {
    phase: "Running",
    startTime: "2026-01-01T00:00:00Z",
    conditions: [{
      type: "Ready",
      status: "True",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    }],
    ...extra,
  };
}

Deno.test("setPodStatus() versions real changes and notifies listeners", () => {
  const m = createPodStatusManager();
  const seen: PodStatusChange[] = [];
  m.onChange((c) => seen.push(c));
  m.setPodStatus(pod, running());
  m.setPodStatus(pod, running()); // no-op
  m.setPodStatus(pod, running({ podIP: "10.0.0.1" }));
  assert.equal(seen.length, 2);
  assert.deepEqual(
    m.allStatuses().map((e) => [e.uid, e.podFullName, e.version]),
    [["u1", "default/web", 2]],
  );
  assert.equal(m.getPodStatus("u1")?.podIP, "10.0.0.1");
});

Deno.test("setPodStatus() keeps startTime, transition times and terminal phases", () => {
  const m = createPodStatusManager();
  m.setPodStatus(pod, running());
  m.setPodStatus(
    pod,
    running({
      startTime: "2026-02-02T00:00:00Z",
      conditions: [{
        type: "Ready",
        status: "True",
        lastTransitionTime: "2026-02-02T00:00:00Z",
      }],
    }),
  );
  const s = m.getPodStatus("u1")!;
  assert.equal(s.startTime, "2026-01-01T00:00:00Z");
  assert.equal(s.conditions?.[0]?.lastTransitionTime, "2026-01-01T00:00:00Z");
  m.setPodStatus(pod, running({ phase: "Succeeded" }));
  m.setPodStatus(pod, running({ phase: "Running" }));
  assert.equal(m.getPodStatus("u1")?.phase, "Succeeded");
});

Deno.test("removePod() forgets the status and notifies once", () => {
  const m = createPodStatusManager();
  const seen: string[] = [];
  const off = m.onChange((c) => seen.push(c.kind));
  m.setPodStatus(pod, running());
  m.removePod("u1");
  m.removePod("u1");
  off();
  m.setPodStatus(pod, running());
  assert.deepEqual(seen, ["set", "removed"]);
});

Deno.test("getPodStatus() returns a copy the caller cannot use to mutate the cache", () => {
  const m = createPodStatusManager();
  m.setPodStatus(pod, running());
  m.getPodStatus("u1")!.phase = "Failed";
  assert.equal(m.getPodStatus("u1")?.phase, "Running");
});

Deno.test("onChange() survives a throwing listener", () => {
  const m = createPodStatusManager();
  let calls = 0;
  m.onChange(() => {
    throw new Error("boom");
  });
  m.onChange(() => calls++);
  m.setPodStatus(pod, running());
  assert.equal(calls, 1);
});

Deno.test("jsonEqual() ignores key order and undefined members", () => {
  assert.ok(
    jsonEqual({ a: 1, b: [1, { c: 2 }] }, {
      b: [1, { c: 2 }],
      a: 1,
      d: undefined,
    }),
  );
  assert.ok(!jsonEqual({ a: [1, 2] }, { a: [2, 1] }));
});
