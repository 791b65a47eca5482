import assert from "node:assert/strict";
import {
  type CgroupFs,
  type CgroupWriter,
  ensurePodCgroup,
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

function memoryCgroups(existing: string[] = []): CgroupWriter & {
  dirs: Set<string>;
  files: Map<string, string>;
} {
  const dirs = new Set(existing);
  const files = new Map<string, string>();
  return {
    dirs,
    files,
    exists: (path) => Promise.resolve(dirs.has(path) || files.has(path)),
    mkdirs(path) {
      const created: string[] = [];
      let current = "";
      for (const part of path.split("/").filter((p) => p)) {
        current += `/${part}`;
        if (!dirs.has(current)) {
          dirs.add(current);
          created.push(current);
        }
      }
      return Promise.resolve(created);
    },
    writeTextFile(path, text) {
      files.set(path, text);
      return Promise.resolve();
    },
  };
}

Deno.test("ensurePodCgroup() creates the pod's cpu and memory cgroups with their settings", async () => {
  const fs = memoryCgroups([
    "/sys",
    "/sys/fs",
    "/sys/fs/cgroup",
    "/sys/fs/cgroup/cpu",
    "/sys/fs/cgroup/memory",
  ]);
  await ensurePodCgroup(fs, "/n/kubepods/burstable/pod1", {
    cpuShares: 102,
    cpuQuota: 20_000,
    cpuPeriod: 100_000,
    memoryLimit: 67_108_864,
  });
  assert.deepEqual(Object.fromEntries(fs.files), {
    "/sys/fs/cgroup/cpu/n/kubepods/burstable/pod1/cpu.shares": "102",
    "/sys/fs/cgroup/cpu/n/kubepods/burstable/pod1/cpu.cfs_period_us": "100000",
    "/sys/fs/cgroup/cpu/n/kubepods/burstable/pod1/cpu.cfs_quota_us": "20000",
    "/sys/fs/cgroup/memory/n/kubepods/burstable/pod1/memory.limit_in_bytes":
      "67108864",
  });
  // a new besteffort QoS directory gets the minimum shares; an existing pod cgroup is left
  const be = memoryCgroups();
  await ensurePodCgroup(be, "/kubepods/besteffort/pod2", { cpuShares: 2 });
  assert.equal(
    be.files.get("/sys/fs/cgroup/cpu/kubepods/besteffort/cpu.shares"),
    "2",
  );
  be.files.clear();
  await ensurePodCgroup(be, "/kubepods/besteffort/pod2", { cpuShares: 2 });
  assert.equal(be.files.size, 0);
  // cgroup v2: nothing here
  const v2 = memoryCgroups(["/sys/fs/cgroup/cgroup.controllers"]);
  await ensurePodCgroup(v2, "/kubepods/pod3", { cpuShares: 2 });
  assert.equal(v2.files.size, 0);
});
