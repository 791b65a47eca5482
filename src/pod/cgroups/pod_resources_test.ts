import assert from "node:assert/strict";
import {
  containerLinuxResources,
  containerOomScoreAdj,
  hugepageLimits,
  hugepageSizeFromDirName,
  milliCpuToQuota,
  milliCpuToShares,
  overheadLinuxResources,
  podCgroupConfig,
  podQOSClass,
  sandboxLinuxResources,
} from "./pod_resources.ts";
import type { Container, Pod, ResourceRequirements } from "../types.ts";

const GiB = 1024 ** 3;
const NODE = { memoryCapacity: 8 * GiB, hugepageSizes: ["2MB", "1GB"] };

function c(name: string, resources?: ResourceRequirements): Container {
  return { name, image: "busybox", ...(resources ? { resources } : {}) };
}

function pod(containers: Container[], spec: Partial<Pod["spec"]> = {}): Pod {
  return {
    metadata: { name: "p", namespace: "default", uid: "u-1" },
    spec: { containers, ...spec },
  };
}

const guaranteed = {
  requests: { cpu: "1", memory: "1Gi" },
  limits: { cpu: "1", memory: "1Gi" },
};

Deno.test("podQOSClass() follows upstream GetPodQOS", () => {
  const cases: [string, Pod, string][] = [
    ["no resources", pod([c("a")]), "BestEffort"],
    ["requests equal limits", pod([c("a", guaranteed)]), "Guaranteed"],
    [
      "limits only, as the API defaults requests",
      pod([
        c("a", {
          limits: { cpu: "1", memory: "1Gi" },
          requests: { cpu: "1000m", memory: "1Gi" },
        }),
      ]),
      "Guaranteed",
    ],
    [
      "cpu only",
      pod([c("a", { requests: { cpu: "1" }, limits: { cpu: "1" } })]),
      "Burstable",
    ],
    [
      "request below limit",
      pod([
        c("a", {
          requests: { cpu: "500m", memory: "1Gi" },
          limits: { cpu: "1", memory: "1Gi" },
        }),
      ]),
      "Burstable",
    ],
    [
      "one guaranteed, one best effort",
      pod([c("a", guaranteed), c("b")]),
      "Burstable",
    ],
    [
      "an init container counts",
      pod([c("a", guaranteed)], { initContainers: [c("i")] }),
      "Burstable",
    ],
    [
      "only zero quantities",
      pod([c("a", { requests: { cpu: "0" } })]),
      "BestEffort",
    ],
    [
      "pod-level resources win",
      pod([c("a")], { resources: guaranteed }),
      "Guaranteed",
    ],
    ["status.qosClass is kept", {
      ...pod([c("a")]),
      status: { qosClass: "Burstable" },
    }, "Burstable"],
  ];
  for (const [what, p, want] of cases) assert.equal(podQOSClass(p), want, what);
});

Deno.test("containerOomScoreAdj() scores by QoS class like GetContainerOOMScoreAdjust", () => {
  assert.equal(containerOomScoreAdj(pod([c("a")]), c("a"), 8 * GiB), 1000);
  assert.equal(
    containerOomScoreAdj(
      pod([c("a", guaranteed)]),
      c("a", guaranteed),
      8 * GiB,
    ),
    -997,
  );
  const critical = pod([c("a")], { priorityClassName: "system-node-critical" });
  assert.equal(containerOomScoreAdj(critical, c("a"), 8 * GiB), -997);
  // Burstable: 1000 - 1000 × request / capacity, kept within 3…999
  const half = c("a", { requests: { memory: "4Gi" } });
  assert.equal(containerOomScoreAdj(pod([half]), half, 8 * GiB), 500);
  const none = c("a", { requests: { cpu: "1" } });
  assert.equal(containerOomScoreAdj(pod([none]), none, 8 * GiB), 999);
  const all = c("a", { requests: { memory: "8Gi" } });
  assert.equal(containerOomScoreAdj(pod([all]), all, 8 * GiB), 3);
});

Deno.test("containerOomScoreAdj() scores a sidecar no higher than the smallest regular request", () => {
  const side: Container = {
    ...c("s", { requests: { memory: "1Gi" } }),
    restartPolicy: "Always",
  };
  const app = c("a", { requests: { memory: "2Gi" } });
  const p = pod([app], { initContainers: [side] });
  // own 1 GiB → 875, the app's 2 GiB → 750: the sidecar takes the lower
  assert.equal(containerOomScoreAdj(p, side, 8 * GiB), 750);
  assert.equal(containerOomScoreAdj(p, app, 8 * GiB), 750);
  const big: Container = {
    ...side,
    resources: { requests: { memory: "4Gi" } },
  };
  const q = pod([app], { initContainers: [big] });
  assert.equal(containerOomScoreAdj(q, big, 8 * GiB), 500);
  // tiny requests on a large node stay a valid score (runc refuses above 1000)
  const tinySide: Container = {
    ...c("s", { requests: { memory: "20Mi" } }),
    restartPolicy: "Always",
  };
  const tinyApp = c("a", { requests: { memory: "20Mi" } });
  const t = pod([tinyApp], { initContainers: [tinySide] });
  assert.equal(containerOomScoreAdj(t, tinySide, 24 * GiB), 999);
});

Deno.test("milliCpuToShares() and milliCpuToQuota() keep upstream's bounds", () => {
  assert.equal(milliCpuToShares(0), 2);
  assert.equal(milliCpuToShares(1), 2);
  assert.equal(milliCpuToShares(250), 256);
  assert.equal(milliCpuToShares(1_000_000), 262_144);
  assert.equal(milliCpuToQuota(0, 100_000), 0);
  assert.equal(milliCpuToQuota(5, 100_000), 1000);
  assert.equal(milliCpuToQuota(1500, 100_000), 150_000);
});

Deno.test("containerLinuxResources() maps requests and limits to CRI resources", () => {
  const best = containerLinuxResources(pod([c("a")]), c("a"), NODE);
  assert.deepEqual(best, {
    cpuShares: 2n,
    cpuPeriod: 100_000n,
    oomScoreAdj: 1000n,
    hugepageLimits: [{ pageSize: "2MB", limit: 0n }, {
      pageSize: "1GB",
      limit: 0n,
    }],
  });
  const limited = c("a", {
    requests: { cpu: "100m", memory: "64Mi" },
    limits: { cpu: "0.5", memory: "128Mi", "hugepages-2Mi": "4Mi" },
  });
  assert.deepEqual(containerLinuxResources(pod([limited]), limited, NODE), {
    cpuShares: 102n,
    cpuPeriod: 100_000n,
    cpuQuota: 50_000n,
    memoryLimitInBytes: 134_217_728n,
    oomScoreAdj: 993n,
    hugepageLimits: [{ pageSize: "2MB", limit: 4_194_304n }, {
      pageSize: "1GB",
      limit: 0n,
    }],
  });
  // no CPU request: shares come from the limit
  const limitOnly = c("a", { limits: { cpu: "2" } });
  assert.equal(
    containerLinuxResources(pod([limitOnly]), limitOnly, NODE).cpuShares,
    2048n,
  );
});

Deno.test("containerLinuxResources() turns swap off as upstream's NoSwap does", () => {
  const limited = c("a", { limits: { memory: "64Mi" } });
  const v1 = containerLinuxResources(pod([limited]), limited, {
    ...NODE,
    swapController: "v1",
  });
  assert.equal(v1.memorySwapLimitInBytes, 67_108_864n);
  const unlimited = containerLinuxResources(pod([c("a")]), c("a"), {
    ...NODE,
    swapController: "v1",
  });
  assert.equal(unlimited.memorySwapLimitInBytes, undefined);
  const v2 = containerLinuxResources(pod([c("a")]), c("a"), {
    ...NODE,
    swapController: "v2",
  });
  assert.deepEqual(v2.unified, { "memory.swap.max": "0" });
  assert.equal(
    containerLinuxResources(pod([limited]), limited, NODE)
      .memorySwapLimitInBytes,
    undefined,
  );
});

Deno.test("containerLinuxResources() groups the OOM kill when the node says so, beside the swap rule", () => {
  const a = c("a", { limits: { memory: "64Mi" } });
  assert.deepEqual(
    containerLinuxResources(pod([a]), a, { ...NODE, memoryOomGroup: true })
      .unified,
    { "memory.oom.group": "1" },
  );
  assert.deepEqual(
    containerLinuxResources(pod([a]), a, {
      ...NODE,
      memoryOomGroup: true,
      swapController: "v2",
    }).unified,
    { "memory.oom.group": "1", "memory.swap.max": "0" },
  );
  assert.equal(containerLinuxResources(pod([a]), a, NODE).unified, undefined);
});

Deno.test("hugepageLimits() and hugepageSizeFromDirName() name page sizes as the CRI does", () => {
  assert.equal(hugepageSizeFromDirName("hugepages-2048kB"), "2MB");
  assert.equal(hugepageSizeFromDirName("hugepages-1048576kB"), "1GB");
  assert.equal(hugepageSizeFromDirName("hugepages-64kB"), "64KB");
  assert.equal(hugepageSizeFromDirName("other"), undefined);
  const huge = c("a", {
    limits: { "hugepages-1Gi": "2Gi", "hugepages-bad": "1" },
  });
  assert.deepEqual(hugepageLimits(huge, ["2MB", "1GB"]), [
    { pageSize: "2MB", limit: 0n },
    { pageSize: "1GB", limit: 2n * BigInt(GiB) },
  ]);
  assert.deepEqual(hugepageLimits(huge, []), []);
});

Deno.test("sandboxLinuxResources() sums regular containers and sidecars, maxes init containers", () => {
  assert.deepEqual(sandboxLinuxResources(pod([c("a")])), {
    cpuShares: 2n,
    cpuPeriod: 100_000n,
  });
  const p = pod([
    c("a", {
      requests: { cpu: "100m" },
      limits: { cpu: "200m", memory: "100Mi" },
    }),
    c("b", {
      requests: { cpu: "300m" },
      limits: { cpu: "300m", memory: "50Mi" },
    }),
  ], {
    initContainers: [
      c("i", { requests: { cpu: "2" }, limits: { cpu: "2" } }),
      {
        ...c("s", { requests: { cpu: "100m" }, limits: { memory: "10Mi" } }),
        restartPolicy: "Always",
      },
    ],
  });
  // requests: max(0.1+0.3+0.1 sidecar, 2 init) = 2 CPU; limits: cpu max(0.5, 2), memory 160Mi
  assert.deepEqual(sandboxLinuxResources(p), {
    cpuShares: 2048n,
    cpuPeriod: 100_000n,
    cpuQuota: 200_000n,
    memoryLimitInBytes: 160n * 1024n * 1024n,
  });
});

Deno.test("overheadLinuxResources() is empty without overhead, guaranteed-style with it", () => {
  assert.deepEqual(overheadLinuxResources(pod([c("a")])), {});
  assert.deepEqual(
    overheadLinuxResources(
      pod([c("a")], { overhead: { cpu: "250m", memory: "120Mi" } }),
    ),
    {
      cpuShares: 256n,
      cpuPeriod: 100_000n,
      cpuQuota: 25_000n,
      memoryLimitInBytes: 120n * 1024n * 1024n,
    },
  );
});

Deno.test("podCgroupConfig() follows upstream ResourceConfigForPod by QoS class", () => {
  assert.deepEqual(podCgroupConfig(pod([c("a")])), { cpuShares: 2 });
  assert.deepEqual(
    podCgroupConfig(
      pod([c("a", guaranteed)], { overhead: { cpu: "100m", memory: "10Mi" } }),
    ),
    {
      cpuShares: 1126,
      cpuQuota: 110_000,
      cpuPeriod: 100_000,
      memoryLimit: GiB + 10 * 1024 * 1024,
    },
  );
  // Burstable: a limit only when every container declares it
  const limited = c("a", {
    requests: { cpu: "100m" },
    limits: { cpu: "200m", memory: "64Mi" },
  });
  assert.deepEqual(podCgroupConfig(pod([limited])), {
    cpuShares: 102,
    cpuQuota: 20_000,
    cpuPeriod: 100_000,
    memoryLimit: 64 * 1024 * 1024,
  });
  assert.deepEqual(
    podCgroupConfig(pod([limited, c("b", { requests: { cpu: "100m" } })])),
    {
      cpuShares: 204,
    },
  );
});
