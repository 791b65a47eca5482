import assert from "node:assert/strict";
import {
  needsReadinessReconcile,
  podReadyCondition,
} from "./readiness_gates.ts";
import type { Pod, PodCondition } from "../types.ts";

const gated: Pod = {
  metadata: { name: "p", namespace: "ns", uid: "u" },
  spec: {
    containers: [{ name: "c", image: "i" }],
    readinessGates: [{ conditionType: "k8s.io/a" }, {
      conditionType: "k8s.io/b",
    }],
  },
};

Deno.test("podReadyCondition(): ContainersReady first, then every gate must be True", () => {
  const notReady = {
    status: "False" as const,
    reason: "ContainersNotReady",
    message: "containers with unready status: [c]",
  };
  assert.deepEqual(podReadyCondition(gated, notReady, []), notReady);
  assert.deepEqual(podReadyCondition(gated, { status: "True" }, []), {
    status: "False",
    reason: "ReadinessGatesNotReady",
    message:
      'corresponding condition of pod readiness gate "k8s.io/a" does not exist., corresponding condition of pod readiness gate "k8s.io/b" does not exist.',
  });
  const conditions: PodCondition[] = [
    { type: "k8s.io/a", status: "True" },
    { type: "k8s.io/b", status: "False" },
  ];
  assert.deepEqual(podReadyCondition(gated, { status: "True" }, conditions), {
    status: "False",
    reason: "ReadinessGatesNotReady",
    message:
      'the status of pod readiness gate "k8s.io/b" is not "True", but False',
  });
  conditions[1]!.status = "True";
  assert.deepEqual(
    podReadyCondition(gated, { status: "True" }, conditions),
    { status: "True" },
  );
  // no gates: Ready is ContainersReady
  const plain: Pod = { ...gated, spec: { containers: gated.spec.containers } };
  assert.deepEqual(podReadyCondition(plain, { status: "True" }, []), {
    status: "True",
  });
});

Deno.test("needsReadinessReconcile() compares the API's Ready with its gates", () => {
  const withStatus = (conditions: PodCondition[]): Pod => ({
    ...gated,
    status: { conditions },
  });
  const base: PodCondition[] = [
    { type: "ContainersReady", status: "True" },
    { type: "k8s.io/a", status: "True" },
    { type: "k8s.io/b", status: "True" },
  ];
  assert.equal(
    needsReadinessReconcile(
      withStatus([...base, { type: "Ready", status: "False" }]),
    ),
    true,
  );
  assert.equal(
    needsReadinessReconcile(
      withStatus([...base, { type: "Ready", status: "True" }]),
    ),
    false,
  );
  // no Ready yet: the kubelet's next status brings it
  assert.equal(needsReadinessReconcile(withStatus(base)), false);
});
