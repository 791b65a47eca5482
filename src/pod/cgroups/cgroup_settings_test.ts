import assert from "node:assert/strict";
import {
  cgroupFileWrites,
  cpuSharesToWeight,
  kubepodsSettings,
  orphanedPodCgroups,
  podCgroupSettings,
  podUidFromCgroupName,
  qosTierSettings,
  reservedCgroupPlans,
} from "./cgroup_settings.ts";
import type { Pod, ResourceRequirements } from "../types.ts";

function pod(uid: string, ...resources: ResourceRequirements[]): Pod {
  return {
    metadata: { name: uid, namespace: "default", uid },
    spec: {
      containers: resources.map((r, i) => ({ name: `c${i}`, resources: r })),
    },
  };
}

const GiB = 1024 ** 3;

Deno.test("cpuSharesToWeight() maps v1 shares onto cgroup v2 weights", () => {
  assert.equal(cpuSharesToWeight(2), 1);
  assert.equal(cpuSharesToWeight(1024), 39);
  assert.equal(cpuSharesToWeight(262_144), 10_000);
});

Deno.test("cgroupFileWrites() picks each generation's files", () => {
  const settings = {
    cpuShares: 1024,
    cpuPeriod: 100_000,
    cpuQuota: 50_000,
    memoryLimit: 64 * 1024 * 1024,
    pidsLimit: -1,
    hugepageLimits: { "2MB": 0, "1GB": "max" as const },
  };
  assert.deepEqual(cgroupFileWrites(settings, "v1", ["2MB", "1GB"]), [
    { controller: "cpu", file: "cpu.shares", value: "1024" },
    { controller: "cpu", file: "cpu.cfs_period_us", value: "100000" },
    { controller: "cpu", file: "cpu.cfs_quota_us", value: "50000" },
    { controller: "memory", file: "memory.limit_in_bytes", value: "67108864" },
    { controller: "pids", file: "pids.max", value: "max" },
    { controller: "hugetlb", file: "hugetlb.2MB.limit_in_bytes", value: "0" },
    {
      controller: "hugetlb",
      file: "hugetlb.2MB.rsvd.limit_in_bytes",
      value: "0",
      optional: true,
    },
    {
      controller: "hugetlb",
      file: "hugetlb.1GB.limit_in_bytes",
      value: "4611686018427387904",
    },
    {
      controller: "hugetlb",
      file: "hugetlb.1GB.rsvd.limit_in_bytes",
      value: "4611686018427387904",
      optional: true,
    },
  ]);
  assert.deepEqual(
    cgroupFileWrites({ ...settings, cpuQuota: -1 }, "v2", ["2MB"]),
    [
      { controller: "cpu", file: "cpu.weight", value: "39" },
      { controller: "cpu", file: "cpu.max", value: "max 100000" },
      { controller: "memory", file: "memory.max", value: "67108864" },
      { controller: "pids", file: "pids.max", value: "max" },
      { controller: "hugetlb", file: "hugetlb.2MB.max", value: "0" },
      {
        controller: "hugetlb",
        file: "hugetlb.2MB.rsvd.max",
        value: "0",
        optional: true,
      },
    ],
  );
  assert.deepEqual(cgroupFileWrites({ cpuSet: "0-3" }, "v2"), [
    { controller: "cpuset", file: "cpuset.cpus", value: "0-3" },
  ]);
  // nothing set, nothing written; no hugetlb controller, no hugepage files
  assert.deepEqual(cgroupFileWrites({}, "v2"), []);
  assert.deepEqual(
    cgroupFileWrites({ hugepageLimits: { "2MB": 1 } }, "v1"),
    [],
  );
});

Deno.test("kubepodsSettings() limits kubepods to capacity minus kube- and system-reserved", () => {
  const capacity = {
    cpuMillis: 4000,
    memoryBytes: 16 * GiB,
    pids: 32_768,
    hugepages: { "2MB": 1 * GiB },
  };
  const reserved = {
    kubeReserved: { cpu: "500m", memory: "1Gi", pid: "1000" },
    systemReserved: { cpu: "500m", memory: "1Gi", "hugepages-2Mi": "512Mi" },
  };
  assert.deepEqual(kubepodsSettings(capacity, reserved), {
    cpuShares: 3072,
    // 16Gi - 2Gi reserved - the hugepages' 512Mi allocatable
    memoryLimit: 13.5 * GiB,
    pidsLimit: 31_768,
    hugepageLimits: { "2MB": 0.5 * GiB },
    // upstream's none CPU manager policy: every CPU
    cpuSet: "0-3",
  });
  // without "pods" in enforceNodeAllocatable: the whole capacity
  assert.deepEqual(kubepodsSettings(capacity, { ...reserved, enforce: [] }), {
    cpuShares: 4096,
    memoryLimit: 16 * GiB,
    pidsLimit: 32_768,
    hugepageLimits: { "2MB": GiB },
    cpuSet: "0-3",
  });
  // never below zero
  assert.equal(
    kubepodsSettings({ cpuMillis: 1000, memoryBytes: GiB }, {
      kubeReserved: { memory: "2Gi", cpu: "2" },
    }).memoryLimit,
    0,
  );
});

Deno.test("qosTierSettings() gives burstable its pods' CPU requests and besteffort 2 shares", () => {
  const burstable = pod("b1", { requests: { cpu: "250m" } });
  const withOverhead: Pod = {
    ...pod("b2", { requests: { cpu: "100m", memory: "10Mi" } }),
  };
  withOverhead.spec.overhead = { cpu: "150m" };
  const guaranteed = pod("g", {
    requests: { cpu: "1", memory: "1Gi" },
    limits: { cpu: "1", memory: "1Gi" },
  });
  const tiers = qosTierSettings(
    [burstable, withOverhead, guaranteed, pod("be", {})],
    ["2MB"],
  );
  assert.deepEqual(tiers, {
    kubepods: { hugepageLimits: { "2MB": "max" } },
    burstable: { cpuShares: 512, hugepageLimits: { "2MB": "max" } },
    besteffort: { cpuShares: 2, hugepageLimits: { "2MB": "max" } },
  });
  assert.deepEqual(qosTierSettings([], []).burstable, { cpuShares: 2 });
});

Deno.test("podCgroupSettings() adds overhead, hugepages and the pod pids limit", () => {
  const p = pod("g", {
    requests: { cpu: "500m", memory: "64Mi", "hugepages-2Mi": "4Mi" },
    limits: { cpu: "500m", memory: "64Mi", "hugepages-2Mi": "4Mi" },
  });
  p.spec.overhead = { cpu: "250m", memory: "16Mi" };
  assert.deepEqual(
    podCgroupSettings(p, { hugepageSizes: ["2MB", "1GB"], podPidsLimit: 100 }),
    {
      cpuShares: 768,
      cpuPeriod: 100_000,
      cpuQuota: 75_000,
      memoryLimit: 80 * 1024 * 1024,
      hugepageLimits: { "2MB": 4 * 1024 * 1024, "1GB": 0 },
      pidsLimit: 100,
    },
  );
  // BestEffort: the minimum shares only; -1 pids means none
  assert.deepEqual(podCgroupSettings(pod("be", {}), { podPidsLimit: -1 }), {
    cpuShares: 2,
  });
});

Deno.test("orphanedPodCgroups() keeps the cgroups of pods the kubelet knows", () => {
  const found = new Map([
    ["a", "/k/kubepods/poda"],
    ["b", "/k/kubepods/burstable/podb"],
  ]);
  assert.deepEqual(orphanedPodCgroups(found, (uid) => uid === "a"), [
    ["b", "/k/kubepods/burstable/podb"],
  ]);
});

Deno.test("reservedCgroupPlans() limits the enforced reserved cgroups to their reservations", () => {
  const config = {
    enforce: ["pods", "system-reserved", "kube-reserved-compressible"],
    systemReserved: { cpu: "500m", memory: "1Gi", pid: "100" },
    kubeReserved: { cpu: "1", memory: "2Gi" },
    systemReservedCgroup: "/system.slice",
    kubeReservedCgroup: "/kube.slice",
  };
  assert.deepEqual(reservedCgroupPlans(config, ["2MB"]), [{
    cgroup: "/system.slice",
    settings: {
      cpuShares: 512,
      memoryLimit: GiB,
      pidsLimit: 100,
      hugepageLimits: { "2MB": 0 },
    },
    label: "System Reserved",
    short: "system reserved",
  }, {
    cgroup: "/kube.slice",
    settings: { cpuShares: 1024 },
    label: "Kube Reserved Compressible",
    short: "kube reserved",
  }]);
  // a key without its reservation cannot be enforced
  assert.deepEqual(
    reservedCgroupPlans({
      enforce: ["kube-reserved"],
      kubeReservedCgroup: "/kube.slice",
    }, []),
    [{
      label: "Kube Reserved",
      error: '"/kube.slice" cgroup is not configured properly',
    }],
  );
  assert.deepEqual(reservedCgroupPlans({}, []), []);
});

Deno.test("podUidFromCgroupName() reads cgroupfs and systemd pod cgroup names", () => {
  assert.equal(podUidFromCgroupName("pod1234-ab"), "1234-ab");
  assert.equal(
    podUidFromCgroupName("kubepods-burstable-pod1234_ab.slice"),
    "1234-ab",
  );
  assert.equal(podUidFromCgroupName("kubepods-pod9_9.slice"), "9-9");
  assert.equal(podUidFromCgroupName("kubepods-burstable.slice"), undefined);
  assert.equal(podUidFromCgroupName("burstable"), undefined);
  assert.equal(podUidFromCgroupName("pod"), undefined);
});
