import assert from "node:assert/strict";
import {
  AllocationError,
  allocationRefusal,
  devicesToAllocate,
} from "./allocation.ts";

const base = {
  podUid: "u1",
  containerName: "c",
  resource: "example.com/resource",
  inUse: new Set<string>(),
};

Deno.test("devicesToAllocate: free healthy devices in id order", () => {
  assert.deepEqual(
    devicesToAllocate({
      ...base,
      required: 2,
      healthy: new Set(["d3", "d1", "d2"]),
      inUse: new Set(["d1"]),
    }),
    ["d2", "d3"],
  );
});

Deno.test("devicesToAllocate: too few free devices is upstream's refusal", () => {
  let error: unknown;
  try {
    devicesToAllocate({ ...base, required: 3, healthy: new Set(["d1", "d2"]) });
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof AllocationError);
  assert.deepEqual(
    allocationRefusal(error),
    {
      reason: "UnexpectedAdmissionError",
      message:
        "Allocate failed due to requested number of devices unavailable for example.com/resource. Requested: 3, Available: 2, which is unexpected",
    },
  );
});

Deno.test("devicesToAllocate: unregistered, all unhealthy, changed request", () => {
  assert.throws(
    () => devicesToAllocate({ ...base, required: 1, healthy: undefined }),
    (e: Error) =>
      e instanceof AllocationError &&
      e.message.includes(
        "cannot allocate unregistered device example.com/resource",
      ),
  );
  assert.throws(
    () => devicesToAllocate({ ...base, required: 1, healthy: new Set() }),
    (e: Error) =>
      e instanceof AllocationError &&
      e.message.includes(
        "no healthy devices present; cannot allocate unhealthy devices example.com/resource",
      ),
  );
  assert.throws(
    () =>
      devicesToAllocate({
        ...base,
        required: 2,
        held: new Set(["d1"]),
        healthy: new Set(["d1", "d2"]),
      }),
    (e: Error) =>
      e instanceof AllocationError &&
      e.message.includes(
        `pod "u1" container "c" changed request for resource "example.com/resource" from 1 to 2`,
      ),
  );
});

Deno.test("devicesToAllocate: a restart keeps its devices, none new", () => {
  assert.deepEqual(
    devicesToAllocate({
      ...base,
      required: 1,
      held: new Set(["d1"]),
      healthy: new Set(["d1", "d2"]),
      inUse: new Set(["d1"]),
    }),
    [],
  );
  assert.throws(
    () =>
      devicesToAllocate({
        ...base,
        required: 1,
        held: new Set(["d1"]),
        healthy: new Set(["d2"]),
      }),
    (e: Error) =>
      e instanceof AllocationError &&
      e.message.includes("previously allocated devices are no longer healthy"),
  );
});

Deno.test("devicesToAllocate: an init container's devices are reused first", () => {
  const ids = devicesToAllocate({
    ...base,
    required: 2,
    healthy: new Set(["d1", "d2", "d3"]),
    inUse: new Set(["d3"]),
    reusable: new Set(["d3"]),
  });
  assert.deepEqual(ids, ["d3", "d1"]);
});
