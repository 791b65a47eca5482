import assert from "node:assert/strict";
import type { RuntimeService } from "../../runtime/mod.ts";
import { listRunningPods, runningPodStandIn } from "./runtime_pods.ts";

function labels(uid: string, name: string): Record<string, string> {
  return {
    "io.kubernetes.pod.uid": uid,
    "io.kubernetes.pod.name": name,
    "io.kubernetes.pod.namespace": "default",
  };
}

const runtime = {
  listPodSandbox: () =>
    Promise.resolve({
      items: [
        { id: "s1", state: 0, labels: labels("ready", "a") },
        { id: "s2", state: 1, labels: labels("stopped", "b") },
        { id: "s3", state: 0, labels: { other: "x" } },
      ],
    }),
  listContainers: () =>
    Promise.resolve({
      containers: [
        { id: "c1", state: 1, labels: labels("running", "c") },
        { id: "c2", state: 2, labels: labels("exited", "d") },
        {
          id: "c3",
          state: 1,
          labels: {
            ...labels("ready", "a"),
            "io.kubernetes.container.name": "app",
          },
          image: { image: "sha256:abc" },
        },
      ],
    }),
} as unknown as RuntimeService;

Deno.test("listRunningPods() lists pods with a ready sandbox or a running container, once each", async () => {
  const pods = await listRunningPods(runtime);
  assert.deepEqual(pods.map((p) => p.uid).sort(), ["ready", "running"]);
  assert.deepEqual(
    (await listRunningPods(runtime, {
      owns: (l) => l["io.kubernetes.pod.name"] === "c",
    })).map((p) => p.uid),
    ["running"],
  );
  assert.deepEqual(pods.find((p) => p.uid === "ready")?.containers, [
    { name: "app", image: "sha256:abc" },
  ]);
});

Deno.test("runningPodStandIn() keeps the identity and has no containers", () => {
  assert.deepEqual(
    runningPodStandIn({ uid: "u", name: "web", namespace: "ns" }),
    {
      metadata: { uid: "u", name: "web", namespace: "ns" },
      spec: { containers: [] },
    },
  );
});
