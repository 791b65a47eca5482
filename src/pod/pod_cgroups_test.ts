import assert from "node:assert/strict";
import {
  type CgroupFs,
  podCgroupParent,
  removePodCgroup,
} from "./pod_cgroups.ts";
import type { Pod, ResourceRequirements } from "./types.ts";

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

Deno.test("removePodCgroup() removes the pod's directory from every hierarchy", async () => {
  const removed: string[] = [];
  const fs: CgroupFs = {
    readDirNames: () => Promise.resolve(["cpu", "memory", "unified"]),
    rmdir(path) {
      if (path.startsWith("/sys/fs/cgroup/unified/")) {
        return Promise.reject(new Deno.errors.NotFound(path));
      }
      removed.push(path);
      return Promise.resolve();
    },
  };
  await removePodCgroup(fs, "/kts/kubepods/besteffort/pod1");
  assert.deepEqual(removed, [
    "/sys/fs/cgroup/cpu/kts/kubepods/besteffort/pod1",
    "/sys/fs/cgroup/memory/kts/kubepods/besteffort/pod1",
    "/sys/fs/cgroup/kts/kubepods/besteffort/pod1",
  ]);
  // the root is never removed
  removed.length = 0;
  await removePodCgroup(fs, "/");
  assert.deepEqual(removed, []);
});

Deno.test("removePodCgroup() tries every hierarchy, then rejects with the first failure", async () => {
  const tried: string[] = [];
  const fs: CgroupFs = {
    readDirNames: () => Promise.resolve(["cpu", "memory"]),
    rmdir(path) {
      tried.push(path);
      return path.includes("/cpu/")
        ? Promise.reject(new Deno.errors.Busy(path))
        : Promise.resolve();
    },
  };
  await assert.rejects(removePodCgroup(fs, "/k/pod1"), Deno.errors.Busy);
  assert.equal(tried.length, 3);
});
