import assert from "node:assert/strict";
import { podCgroupParent, qosCgroupNames } from "./pod_cgroups.ts";
import type { Pod, ResourceRequirements } from "../types.ts";

function pod(resources?: ResourceRequirements): Pod {
  return {
    metadata: { name: "p", namespace: "default", uid: "1234-abcd" },
    spec: { containers: [{ name: "a", ...(resources ? { resources } : {}) }] },
  };
}

const guaranteed = {
  requests: { cpu: "1", memory: "1Gi" },
  limits: { cpu: "1", memory: "1Gi" },
};
const burstable = { requests: { cpu: "1" } };

Deno.test("podCgroupParent() places pods under kubepods by QoS for cgroupfs", () => {
  assert.equal(podCgroupParent(pod(), {}), "/kubepods/besteffort/pod1234-abcd");
  assert.equal(
    podCgroupParent(pod(), { cgroupRoot: "/diff-node" }),
    "/diff-node/kubepods/besteffort/pod1234-abcd",
  );
  assert.equal(
    podCgroupParent(pod(burstable), { cgroupRoot: "/" }),
    "/kubepods/burstable/pod1234-abcd",
  );
  assert.equal(
    podCgroupParent(pod(guaranteed), { cgroupRoot: "/a/b/" }),
    "/a/b/kubepods/pod1234-abcd",
  );
});

Deno.test("podCgroupParent() expands systemd slices with escaped dashes", () => {
  assert.equal(
    podCgroupParent(pod(burstable), { cgroupDriver: "systemd" }),
    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd.slice",
  );
  assert.equal(
    podCgroupParent(pod(guaranteed), { cgroupDriver: "systemd" }),
    "/kubepods.slice/kubepods-pod1234_abcd.slice",
  );
});

Deno.test("podCgroupParent() gives every pod the root without cgroupsPerQOS", () => {
  assert.equal(podCgroupParent(pod(), { cgroupsPerQOS: false }), "/");
  assert.equal(
    podCgroupParent(pod(), { cgroupsPerQOS: false, cgroupRoot: "/pods" }),
    "/pods",
  );
});

Deno.test("qosCgroupNames() names kubepods and its tiers in the driver's form", () => {
  assert.deepEqual(qosCgroupNames({ cgroupRoot: "/n" }), {
    kubepods: "/n/kubepods",
    burstable: "/n/kubepods/burstable",
    besteffort: "/n/kubepods/besteffort",
  });
  assert.deepEqual(qosCgroupNames({ cgroupDriver: "systemd" }), {
    kubepods: "/kubepods.slice",
    burstable: "/kubepods.slice/kubepods-burstable.slice",
    besteffort: "/kubepods.slice/kubepods-besteffort.slice",
  });
});
