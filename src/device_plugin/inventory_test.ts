import assert from "node:assert/strict";
import { DeviceInventory, ENDPOINT_STOP_GRACE_MS } from "./inventory.ts";
import { registrationProblem } from "./registration.ts";

const R = "example.com/resource";
const dev = (id: string, health = "Healthy") => ({ id, health, numaNodes: [] });

Deno.test("inventory: capacity counts every device, allocatable the healthy ones", () => {
  const inv = new DeviceInventory();
  inv.connected(R);
  inv.update(R, [dev("a"), dev("b", "Unhealthy"), dev("c")]);
  assert.deepEqual(inv.capacity(0), {
    capacity: { [R]: 3 },
    allocatable: { [R]: 2 },
    removed: [],
  });
});

Deno.test("inventory: a gone plugin leaves 0 allocatable, then is removed after the grace period", () => {
  const inv = new DeviceInventory();
  inv.connected(R);
  inv.update(R, [dev("a"), dev("b")]);
  inv.disconnected(R, 1000);
  assert.deepEqual(inv.capacity(1000 + ENDPOINT_STOP_GRACE_MS), {
    capacity: { [R]: 2 },
    allocatable: { [R]: 0 },
    removed: [],
  });
  assert.deepEqual(inv.capacity(1001 + ENDPOINT_STOP_GRACE_MS), {
    capacity: {},
    allocatable: {},
    removed: [R],
  });
  assert.equal(inv.has(R), false);
});

Deno.test("inventory: re-registration inside the grace period keeps the resource", () => {
  const inv = new DeviceInventory();
  inv.connected(R);
  inv.update(R, [dev("a")]);
  inv.disconnected(R, 0);
  inv.connected(R);
  inv.update(R, [dev("a")]);
  assert.deepEqual(inv.capacity(10 * ENDPOINT_STOP_GRACE_MS).allocatable, {
    [R]: 1,
  });
});

Deno.test("registration: upstream's texts for a bad version and a bad resource name", () => {
  assert.equal(
    registrationProblem({
      version: "v1alpha1",
      endpoint: "p.sock",
      resourceName: R,
    }),
    'requested API version "v1alpha1" is not supported by kubelet. Supported version is ["v1beta1"]',
  );
  assert.equal(
    registrationProblem({
      version: "v1beta1",
      endpoint: "p.sock",
      resourceName: "cpu",
    }),
    'the ResourceName "cpu" is invalid',
  );
  assert.equal(
    registrationProblem({
      version: "v1beta1",
      endpoint: "p.sock",
      resourceName: "kubernetes.io/x",
    }),
    'the ResourceName "kubernetes.io/x" is invalid',
  );
  assert.match(
    registrationProblem({
      version: "v1beta1",
      endpoint: "../x",
      resourceName: R,
    }) ?? "",
    /invalid endpoint/,
  );
  assert.equal(
    registrationProblem({
      version: "v1beta1",
      endpoint: "p.sock",
      resourceName: R,
    }),
    undefined,
  );
});
