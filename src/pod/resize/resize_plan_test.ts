import assert from "node:assert/strict";
import type { Container, Pod, ResourceRequirements } from "../types.ts";
import {
  memoryDecreaseRefusal,
  planResize,
  resizeSteps,
} from "./resize_plan.ts";

function container(
  name: string,
  resources: ResourceRequirements,
  resizePolicy?: Container["resizePolicy"],
): Container {
  return {
    name,
    image: "busybox",
    resources,
    ...(resizePolicy ? { resizePolicy } : {}),
  };
}

function pod(...containers: Container[]): Pod {
  return { metadata: { name: "p", uid: "u1" }, spec: { containers } };
}

const running = [{ name: "c1", id: "id1" }, { name: "c2", id: "id2" }];

Deno.test("planResize(): decreases before increases, RestartContainer restarts, unchanged or unrecorded containers are left", () => {
  const applied = new Map<string, ResourceRequirements>([
    ["c1", { limits: { cpu: "200m", memory: "64Mi" } }],
    ["c2", { limits: { cpu: "200m", memory: "64Mi" } }],
  ]);
  const plan = planResize(
    pod(
      container("c1", { limits: { cpu: "300m", memory: "64Mi" } }),
      container("c2", { limits: { cpu: "100m", memory: "64Mi" } }),
    ),
    running,
    (n) => applied.get(n),
  );
  assert.deepEqual(plan.update.cpu.map((u) => u.container.name), ["c2", "c1"]);
  assert.deepEqual(plan.update.memory, []);
  assert.deepEqual(plan.restart, []);

  const restart = planResize(
    pod(
      container("c1", { limits: { cpu: "200m", memory: "128Mi" } }, [
        { resourceName: "memory", restartPolicy: "RestartContainer" },
      ]),
      container("c2", { limits: { cpu: "200m", memory: "64Mi" } }),
    ),
    running,
    (n) => applied.get(n),
  );
  assert.deepEqual(restart.restart, [{
    name: "c1",
    containerId: "id1",
    message: "Container c1 resize requires restart",
  }]);
  assert.equal(restart.podResources, true);
  assert.equal(
    planResize(
      pod(container("c1", { limits: { cpu: "1" } })),
      running,
      () => undefined,
    )
      .update.cpu.length,
    0,
  );
});

Deno.test("resizeSteps(): a growing pod limit before the containers, a shrinking one after", () => {
  const applied = { limits: { cpu: "200m", memory: "64Mi" } };
  const plan = planResize(
    pod(container("c1", { limits: { cpu: "300m", memory: "32Mi" } })),
    running,
    () => applied,
  );
  const steps = resizeSteps(
    plan,
    { cpuQuota: 20_000, cpuShares: 204, memoryLimit: 64 << 20 },
    { cpuQuota: 30_000, cpuShares: 307, memoryLimit: 32 << 20 },
  );
  assert.deepEqual(steps, [
    { kind: "containers", resource: "memory" },
    { kind: "podCgroup", resource: "memory", set: "limit" },
    { kind: "podCgroup", resource: "cpu", set: "limit" },
    { kind: "podCgroup", resource: "cpu", set: "request" },
    { kind: "containers", resource: "cpu" },
  ]);
  // the other way round
  const back = planResize(
    pod(container("c1", { limits: { cpu: "200m", memory: "64Mi" } })),
    running,
    () => ({ limits: { cpu: "300m", memory: "32Mi" } }),
  );
  assert.deepEqual(
    resizeSteps(
      back,
      { cpuQuota: 30_000, cpuShares: 307, memoryLimit: 32 << 20 },
      { cpuQuota: 20_000, cpuShares: 204, memoryLimit: 64 << 20 },
    ),
    [
      { kind: "podCgroup", resource: "memory", set: "limit" },
      { kind: "containers", resource: "memory" },
      { kind: "containers", resource: "cpu" },
      { kind: "podCgroup", resource: "cpu", set: "request" },
      { kind: "podCgroup", resource: "cpu", set: "limit" },
    ],
  );
});

Deno.test("memoryDecreaseRefusal() refuses a limit at or below the current usage", () => {
  const applied = { limits: { memory: "64Mi" }, requests: { memory: "64Mi" } };
  const plan = planResize(
    pod(
      container("c1", {
        limits: { memory: "10Ki" },
        requests: { memory: "10Ki" },
      }),
    ),
    running,
    () => applied,
  );
  const current = { cpuQuota: -1, cpuShares: 2, memoryLimit: 64 << 20 };
  const desired = { cpuQuota: -1, cpuShares: 2, memoryLimit: 10 << 10 };
  assert.match(
    memoryDecreaseRefusal(plan, current, desired, {
      pod: 1 << 20,
      containers: new Map([["c1", 1 << 20]]),
    }) ?? "",
    /^cannot decrease memory limits: .*memory limit \(10240\) below current usage \(1048576\)/,
  );
  assert.equal(
    memoryDecreaseRefusal(plan, current, desired, {
      pod: 1 << 12,
      containers: new Map([["c1", 1 << 12]]),
    }),
    undefined,
  );
});
