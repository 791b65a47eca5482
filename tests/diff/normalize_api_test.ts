import assert from "node:assert/strict";
import {
  eventsView,
  maskApi,
  nodeView,
  podStatusView,
} from "./normalize_api.ts";

Deno.test("maskApi: node names, IPs, durations and times are masked", () => {
  assert.deepEqual(
    maskApi({
      hostIP: "192.0.2.7",
      message: "Pulled in 1.5s (350ms including waiting) on n-1",
      startedAt: "2026-12-03T08:00:00Z",
    }, { paths: { node: "n-1" } }),
    {
      hostIP: "<ip>",
      message: "Pulled in <duration> (<duration> including waiting) on <node>",
      startedAt: "<time>",
    },
  );
});

Deno.test("podStatusView: conditions by type with type/status/reason, statuses by name", () => {
  const view = podStatusView({
    status: {
      phase: "Running",
      conditions: [
        { type: "Ready", status: "True", lastTransitionTime: "t" },
        { type: "Initialized", status: "False", reason: "R", message: "m" },
      ],
      containerStatuses: [{ name: "b" }, { name: "a" }],
    },
  }) as Record<string, unknown>;
  assert.deepEqual(view.conditions, [
    { type: "Initialized", status: "False", reason: "R" },
    { type: "Ready", status: "True" },
  ]);
  assert.deepEqual(view.containerStatuses, [{ name: "a" }, { name: "b" }]);
});

Deno.test("eventsView: the kubelet's events of the named objects, each once, sorted", () => {
  const e = (name: string, reason: string) => ({
    type: "Normal",
    reason,
    message: "m",
    involvedObject: { kind: "Pod", name },
    source: { component: "kubelet" },
  });
  assert.deepEqual(
    eventsView({
      items: [
        e("p", "Started"),
        e("q", "Started"),
        e("p", "Created"),
        e(
          "p",
          "Started",
        ),
      ],
    }, ["p"]),
    [
      "Pod |  | Normal | Created | kubelet | m",
      "Pod |  | Normal | Started | kubelet | m",
    ],
  );
});

Deno.test("nodeView: taints as key:effect, host nodeInfo values, kubelet's versions and ports masked", () => {
  const view = nodeView({
    spec: { taints: [{ key: "k", effect: "NoSchedule" }] },
    status: {
      nodeInfo: { kubeletVersion: "v1", osImage: "Linux" },
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      capacity: { pods: "110", cpu: "2", memory: "1Gi" },
    },
  }) as Record<string, unknown>;
  assert.deepEqual(view.taints, ["k:NoSchedule"]);
  assert.deepEqual(view.nodeInfo, {
    kubeletVersion: "<kubelet's>",
    osImage: "Linux",
  });
  assert.deepEqual(view.daemonEndpoints, {
    kubeletEndpoint: { Port: "<port>" },
  });
  assert.deepEqual(view.capacity, ["cpu", "memory", "pods"]);
});
