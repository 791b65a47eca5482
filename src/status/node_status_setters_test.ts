import assert from "node:assert/strict";
import {
  computeNodeStatus,
  formatBinaryQuantity,
  keepPatchedResources,
  type NodeFacts,
  nodeImages,
  nodeResources,
  readinessErrors,
  rfc3339Seconds,
} from "./node_status_setters.ts";

function facts(over: Partial<NodeFacts> = {}): NodeFacts {
  return {
    hostname: "node-a",
    nodeIPs: ["192.0.2.10"],
    cpuCores: 4,
    memoryBytes: 8 * 2 ** 30,
    ephemeralStorageBytes: 100 * 2 ** 30,
    maxPods: 110,
    reserved: {
      memoryBytes: 100 * 2 ** 20,
      ephemeralStorageBytes: 10 * 2 ** 30,
    },
    nodeInfo: {
      machineID: "m",
      systemUUID: "s",
      bootID: "b",
      kernelVersion: "6.1.0",
      osImage: "Debian GNU/Linux 12 (bookworm)",
      kubeletVersion: "v1.34.0",
      operatingSystem: "linux",
      architecture: "amd64",
    },
    containerRuntimeVersion: "containerd://1.7.0",
    kubeletPort: 10250,
    runtimeConditions: [
      { type: "RuntimeReady", status: true, reason: "", message: "" },
      { type: "NetworkReady", status: true, reason: "", message: "" },
    ],
    ...over,
  };
}

Deno.test("formatBinaryQuantity() prints the largest exact binary suffix", () => {
  assert.equal(formatBinaryQuantity(0), "0");
  assert.equal(formatBinaryQuantity(1000), "1000");
  assert.equal(formatBinaryQuantity(8343990272), "8148428Ki");
  assert.equal(formatBinaryQuantity(2 ** 30), "1Gi");
  assert.equal(formatBinaryQuantity(1536 * 2 ** 20), "1536Mi");
  assert.equal(formatBinaryQuantity(-5), "0");
});

Deno.test("computeNodeStatus() reports capacity, allocatable minus reservations, addresses and nodeInfo", () => {
  const s = computeNodeStatus(undefined, facts(), Date.UTC(2026, 0, 1));
  assert.deepEqual(s.capacity, {
    cpu: "4",
    memory: "8Gi",
    pods: "110",
    "ephemeral-storage": "100Gi",
  });
  assert.deepEqual(s.allocatable, {
    cpu: "4",
    memory: "8092Mi",
    pods: "110",
    "ephemeral-storage": "90Gi",
  });
  assert.deepEqual(s.addresses, [
    { type: "InternalIP", address: "192.0.2.10" },
    { type: "Hostname", address: "node-a" },
  ]);
  assert.deepEqual(s.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
  assert.equal(s.nodeInfo?.containerRuntimeVersion, "containerd://1.7.0");
  assert.deepEqual(s.conditions?.map((c) => `${c.type}=${c.status}`), [
    "MemoryPressure=False",
    "DiskPressure=False",
    "PIDPressure=False",
    "Ready=True",
  ]);
  const ready = s.conditions![3]!;
  assert.equal(ready.reason, "KubeletReady");
  assert.equal(ready.message, "kubelet is posting ready status");
  assert.equal(ready.lastHeartbeatTime, "2026-01-01T00:00:00Z");
});

Deno.test("computeNodeStatus() keeps transition times while a condition holds and moves them when it flips", () => {
  const t0 = Date.UTC(2026, 0, 1);
  const first = computeNodeStatus(undefined, facts(), t0);
  const same = computeNodeStatus(first, facts(), t0 + 10_000);
  const ready = (s: typeof first) =>
    s.conditions!.find((c) => c.type === "Ready")!;
  assert.equal(ready(same).lastTransitionTime, rfc3339Seconds(t0));
  assert.equal(ready(same).lastHeartbeatTime, rfc3339Seconds(t0 + 10_000));
  const down = computeNodeStatus(
    same,
    facts({ runtimeDown: true }),
    t0 + 20_000,
  );
  assert.equal(ready(down).status, "False");
  assert.equal(ready(down).reason, "KubeletNotReady");
  assert.equal(ready(down).message, "container runtime is down");
  assert.equal(ready(down).lastTransitionTime, rfc3339Seconds(t0 + 20_000));
  assert.equal(
    down.conditions!.find((c) => c.type === "MemoryPressure")!
      .lastTransitionTime,
    rfc3339Seconds(t0),
  );
});

Deno.test("readinessErrors() words runtime and network problems as upstream", () => {
  const capacity = {
    cpu: "1",
    memory: "1Ki",
    pods: "1",
    "ephemeral-storage": "1",
  };
  const unchecked = facts();
  delete unchecked.runtimeConditions;
  assert.deepEqual(
    readinessErrors(unchecked, capacity),
    ["container runtime status check may not have completed yet"],
  );
  assert.deepEqual(
    readinessErrors(
      facts({
        runtimeConditions: [
          { type: "RuntimeReady", status: true, reason: "", message: "" },
          {
            type: "NetworkReady",
            status: false,
            reason: "NetworkPluginNotReady",
            message: "cni plugin not initialized",
          },
        ],
      }),
      capacity,
    ),
    [
      "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized",
    ],
  );
  const both = computeNodeStatus(
    undefined,
    facts({ runtimeConditions: [] }),
    0,
  ).conditions!.find((c) => c.type === "Ready")!;
  assert.equal(
    both.message,
    "[container runtime not ready: RuntimeReady=false reason: message:, container runtime network not ready: NetworkReady=false reason: message:]",
  );
  assert.deepEqual(
    readinessErrors(facts(), { cpu: "1", pods: "1" }),
    ["Missing node capacity for resources: memory, ephemeral-storage"],
  );
});

Deno.test("nodeImages() lists the largest images first, digests then tags, at most 5 names", () => {
  const images = [
    { repoDigests: ["small@sha256:1"], repoTags: ["small:1"], sizeBytes: 10 },
    {
      repoDigests: ["big@sha256:a", "big@sha256:b"],
      repoTags: ["big:1", "big:2", "big:3", "big:4"],
      sizeBytes: 1000,
    },
    { repoDigests: [], repoTags: ["mid:1"], sizeBytes: 100 },
  ];
  assert.deepEqual(nodeImages(images), [
    {
      names: ["big@sha256:a", "big@sha256:b", "big:1", "big:2", "big:3"],
      sizeBytes: 1000,
    },
    { names: ["mid:1"], sizeBytes: 100 },
    { names: ["small@sha256:1", "small:1"], sizeBytes: 10 },
  ]);
  assert.equal(nodeImages(images, 2).length, 2);
  assert.equal(nodeImages(images, -1).length, 3);
  assert.equal(nodeImages(images, 0).length, 0);
});

Deno.test("computeNodeStatus() reports images when the runtime listed them, else keeps the last list", () => {
  const listed = computeNodeStatus(
    undefined,
    facts({
      images: [{ repoDigests: [], repoTags: ["a:1"], sizeBytes: 5 }],
    }),
    0,
  );
  assert.deepEqual(listed.images, [{ names: ["a:1"], sizeBytes: 5 }]);
  assert.deepEqual(computeNodeStatus(listed, facts(), 0).images, listed.images);
  assert.equal(computeNodeStatus(undefined, facts(), 0).images, undefined);
});

Deno.test("keepPatchedResources() keeps capacity it does not compute, mirrors it to allocatable and drops stale extended allocatable", () => {
  const kept = keepPatchedResources({
    capacity: { cpu: "8", "example.com/foo": "3" },
    allocatable: { cpu: "8", "example.com/gone": "1", "example.com/foo": "1" },
  }, {
    capacity: { cpu: "2", memory: "1Gi" },
    allocatable: { cpu: "1500m", memory: "1Gi" },
  });
  assert.deepEqual(kept, {
    capacity: { cpu: "2", memory: "1Gi", "example.com/foo": "3" },
    allocatable: { cpu: "1500m", memory: "1Gi", "example.com/foo": "3" },
  });
});

Deno.test("nodeResources() lists every huge page size of the machine, 0 when none are reserved", () => {
  const { capacity, allocatable } = nodeResources(facts({
    hugepages: [
      { pageBytes: 2 * 2 ** 20, pages: 3 },
      { pageBytes: 2 ** 30, pages: 0 },
    ],
  }));
  assert.equal(capacity["hugepages-2Mi"], "6Mi");
  assert.equal(capacity["hugepages-1Gi"], "0");
  assert.equal(allocatable["hugepages-2Mi"], "6Mi");
  assert.equal(allocatable["hugepages-1Gi"], "0");
  assert.equal(
    Object.keys(nodeResources(facts()).capacity).some((k) =>
      k.startsWith("hugepages-")
    ),
    false,
  );
});

Deno.test("nodeResources() takes reserved CPU off allocatable, never below zero", () => {
  // upstream MachineInfo setter: allocatable = capacity - (kube + system reserved + hard eviction), floored at 0
  const reserved = (cpuMillis: number) =>
    nodeResources(facts({ reserved: { cpuMillis } }));
  assert.equal(reserved(500).capacity.cpu, "4");
  assert.equal(reserved(500).allocatable.cpu, "3500m");
  assert.equal(reserved(1000).allocatable.cpu, "3");
  assert.equal(reserved(0).allocatable.cpu, "4");
  assert.equal(reserved(6000).allocatable.cpu, "0");
});

Deno.test("computeNodeStatus() reports the node not ready while it shuts down", () => {
  const ready = (f: NodeFacts) =>
    computeNodeStatus(undefined, f, 0).conditions!.find((c) =>
      c.type === "Ready"
    )!;
  assert.equal(ready(facts()).status, "True");
  const down = ready(facts({ shutdownError: "node is shutting down" }));
  assert.deepEqual([down.status, down.reason, down.message], [
    "False",
    "KubeletNotReady",
    "node is shutting down",
  ]);
});

Deno.test("nodeResources() reports device plugin resources: all devices in capacity, healthy ones allocatable, a removed one as 0", () => {
  const { capacity, allocatable } = nodeResources(facts({
    devicePlugins: {
      capacity: { "example.com/resource": 3 },
      allocatable: { "example.com/resource": 1 },
      removed: ["example.com/gone"],
    },
  }));
  assert.equal(capacity["example.com/resource"], "3");
  assert.equal(allocatable["example.com/resource"], "1");
  assert.equal(capacity["example.com/gone"], "0");
  assert.equal(allocatable["example.com/gone"], "0");
});

Deno.test("computeNodeStatus() reports the runtime handlers and features as upstream's setters do", () => {
  const now = Date.UTC(2026, 0, 1);
  // containerd 1.x: no handlers, no features; nothing is reported
  const old = computeNodeStatus(
    undefined,
    facts({ runtimeHandlers: [] }),
    now,
  );
  assert.equal("runtimeHandlers" in old, false);
  assert.equal("features" in old, false);
  const s = computeNodeStatus(
    undefined,
    facts({
      runtimeHandlers: [
        { name: "", recursiveReadOnlyMounts: true, userNamespaces: true },
        { name: "kata", recursiveReadOnlyMounts: true, userNamespaces: false },
      ],
      runtimeFeatures: { supplementalGroupsPolicy: true },
    }),
    now,
  );
  assert.deepEqual(s.runtimeHandlers, [
    {
      name: "",
      features: { recursiveReadOnlyMounts: true, userNamespaces: true },
    },
    {
      name: "kata",
      features: { recursiveReadOnlyMounts: true, userNamespaces: false },
    },
  ]);
  assert.deepEqual(s.features, { supplementalGroupsPolicy: true });
});
