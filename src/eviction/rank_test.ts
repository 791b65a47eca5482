import assert from "node:assert/strict";
import { evictionMessage, rankPods } from "./rank.ts";
import { evictionPod, memoryUsage } from "./testing.ts";
import type { PodUsage } from "./rank.ts";

const MI = 2 ** 20;

function rank(
  pods: ReturnType<typeof evictionPod>[],
  usage: Record<string, PodUsage | undefined>,
  resource: "memory" | "pids" | "ephemeral-storage" = "memory",
) {
  return rankPods(pods, (p) => usage[p.metadata.name ?? ""], { resource })
    .map((p) => p.metadata.name);
}

Deno.test("rankPods() for memory: over its request first, then lower priority, then more use above the request", () => {
  const pods = [
    evictionPod("under", { memoryRequest: "100Mi" }),
    evictionPod("high-over", { priority: 100 }),
    evictionPod("small-over", { memoryRequest: "10Mi" }),
    evictionPod("big-over", { memoryRequest: "10Mi" }),
    evictionPod("less-under", { memoryRequest: "20Mi" }),
  ];
  assert.deepEqual(
    rank(pods, {
      "under": memoryUsage(50 * MI),
      "high-over": memoryUsage(500 * MI),
      "small-over": memoryUsage(20 * MI),
      "big-over": memoryUsage(40 * MI),
      "less-under": memoryUsage(15 * MI),
    }),
    ["big-over", "small-over", "high-over", "less-under", "under"],
  );
});

Deno.test("rankPods() puts a pod without stats first", () => {
  const pods = [evictionPod("measured"), evictionPod("unknown")];
  assert.deepEqual(
    rank(pods, { measured: memoryUsage(10 * MI) }),
    ["unknown", "measured"],
  );
});

Deno.test("rankPods() for memory: usage equal to the request is not over it", () => {
  const pods = [
    evictionPod("equal", { memoryRequest: "10Mi" }),
    evictionPod("over", { memoryRequest: "100Mi", priority: 5 }),
  ];
  assert.deepEqual(
    rank(pods, {
      equal: memoryUsage(10 * MI),
      over: memoryUsage(100 * MI + 1),
    }),
    ["over", "equal"],
  );
});

Deno.test("rankPods() for disk counts writable layers, logs and disk emptyDirs", () => {
  const volumePod = evictionPod("volume");
  volumePod.spec.volumes = [{ name: "scratch", emptyDir: {} }];
  const layerPod = evictionPod("layer");
  const usage: Record<string, PodUsage> = {
    volume: {
      containers: [{ name: "main", rootfsBytes: 1, logsBytes: 1 }],
      volumes: new Map([["scratch", { bytes: 50 * MI, inodes: 3 }]]),
    },
    layer: {
      containers: [{ name: "main", rootfsBytes: 30 * MI, logsBytes: 1 }],
      volumes: new Map(),
    },
  };
  assert.deepEqual(
    rank([layerPod, volumePod], usage, "ephemeral-storage"),
    ["volume", "layer"],
  );
  // with a dedicated image filesystem nodefs ranks logs and volumes only
  assert.deepEqual(
    rankPods([volumePod, layerPod], (p) => usage[p.metadata.name ?? ""], {
      resource: "ephemeral-storage",
      kinds: ["root"],
    }).map((p) => p.metadata.name),
    ["layer", "volume"],
  );
});

Deno.test("evictionMessage() states the resource, the threshold and the containers over their requests", () => {
  const pod = evictionPod("p", { memoryRequest: "4Mi" });
  assert.equal(
    evictionMessage(pod, {
      resource: "memory",
      usage: memoryUsage(16 * MI + 512),
      met: { quantity: 100 * MI, available: 93 * MI + 3 },
    }),
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 97517571. Container main was using 16777728, request is 4Mi, has larger consumption of memory. ",
  );
  assert.equal(
    evictionMessage(evictionPod("q", { memoryRequest: "64Mi" }), {
      resource: "memory",
      usage: memoryUsage(16 * MI),
      met: { quantity: 100 * MI, available: 90 * MI },
    }),
    "The node was low on resource: memory. Threshold quantity: 100Mi, available: 90Mi. ",
  );
  assert.equal(
    evictionMessage(evictionPod("b"), {
      resource: "memory",
      usage: memoryUsage(8 * MI),
      met: undefined,
    }),
    "The node was low on resource: memory. Container main was using 8Mi, request is 0, has larger consumption of memory. ",
  );
});
