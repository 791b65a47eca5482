import assert from "node:assert/strict";
import type { Pod } from "../types.ts";
import {
  allocationFromPod,
  decideResize,
  podWithAllocation,
  resizeInProgress,
} from "./allocation.ts";

function pod(
  cpu: string,
  memory = "64Mi",
  extra: Partial<Pod["metadata"]> = {},
): Pod {
  return {
    metadata: { name: "p", namespace: "ns", uid: "u1", ...extra },
    spec: {
      containers: [{
        name: "c1",
        image: "busybox",
        resources: {
          requests: { cpu, memory },
          limits: { cpu, memory },
        },
      }],
      initContainers: [
        {
          name: "init",
          image: "busybox",
          resources: { requests: { cpu: "1" } },
        },
        {
          name: "side",
          image: "busybox",
          restartPolicy: "Always",
          resources: { requests: { cpu: "100m" } },
        },
      ],
    },
  };
}

const env = {
  allocatable: { cpuMillis: 2000, memoryBytes: 1 << 30 },
  admit: () => ({ admit: true as const }),
};

Deno.test("allocationFromPod() keeps regular containers and sidecars, not plain init containers", () => {
  assert.deepEqual([...allocationFromPod(pod("200m")).keys()], ["c1", "side"]);
});

Deno.test("podWithAllocation() swaps in the allocation; the same value spelled otherwise is no change", () => {
  const allocated = allocationFromPod(pod("200m"));
  const resized = podWithAllocation(pod("300m"), allocated);
  assert.equal(resized.changed, true);
  assert.equal(resized.pod.spec.containers[0]!.resources?.limits?.cpu, "200m");
  assert.equal(podWithAllocation(pod("0.2"), allocated).changed, false);
});

Deno.test("decideResize(): none, accept, Infeasible beyond allocatable or for static pods, Deferred when admission refuses", () => {
  const allocated = pod("200m");
  const ctx = (want: Pod) => ({
    ...env,
    ...podWithAllocation(want, allocationFromPod(allocated)),
    allocated,
  });
  assert.deepEqual(
    decideResize(allocated, { ...ctx(allocated), changed: false }),
    { kind: "none" },
  );
  assert.deepEqual(decideResize(pod("300m"), ctx(pod("300m"))), {
    kind: "accept",
  });
  assert.deepEqual(decideResize(pod("3"), ctx(pod("3"))), {
    kind: "infeasible",
    message:
      "Node didn't have enough capacity: cpu, requested: 3100, capacity: 2000",
  });
  assert.deepEqual(decideResize(pod("200m", "2Gi"), ctx(pod("200m", "2Gi"))), {
    kind: "infeasible",
    message:
      "Node didn't have enough capacity: memory, requested: 2147483648, capacity: 1073741824",
  });
  const staticPod = pod("300m", "64Mi", {
    annotations: { "kubernetes.io/config.source": "file" },
  });
  assert.equal(decideResize(staticPod, ctx(staticPod)).kind, "infeasible");
  const refused = {
    ...ctx(pod("300m")),
    admit: () => ({
      admit: false as const,
      message: "Node didn't have enough resource: cpu",
    }),
  };
  assert.deepEqual(decideResize(pod("300m"), refused), {
    kind: "deferred",
    message: "Node didn't have enough resource: cpu",
  });
});

Deno.test("resizeInProgress() compares running containers' allocation with what was applied", () => {
  const allocated = pod("300m");
  const applied = allocationFromPod(pod("200m"));
  assert.equal(
    resizeInProgress(allocated, () => true, (n) => applied.get(n)),
    true,
  );
  assert.equal(
    resizeInProgress(allocated, () => false, (n) => applied.get(n)),
    false,
  );
  const same = allocationFromPod(pod("0.3"));
  assert.equal(
    resizeInProgress(allocated, () => true, (n) => same.get(n)),
    false,
  );
});
