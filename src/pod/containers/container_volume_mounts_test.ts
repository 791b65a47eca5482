import assert from "node:assert/strict";
import type { ContainerMountContext, VolumeManager } from "../../volume/mod.ts";
import { containerVolumeMounts } from "./container_volume_mounts.ts";
import type { Pod, PodRuntimeStatus } from "../types.ts";

function recorder(): VolumeManager & { seen: ContainerMountContext[] } {
  const seen: ContainerMountContext[] = [];
  return {
    seen,
    setUpPod: () => Promise.resolve({ ok: true }),
    containerMounts(_pod, _container, context) {
      seen.push(context);
      return Promise.resolve([]);
    },
    tearDownPod: () => Promise.resolve(),
  };
}

const pod = {
  metadata: { name: "p", namespace: "ns", uid: "u" },
  spec: {
    containers: [{
      name: "app",
      env: [{ name: "DIR", value: "logs" }, { name: "EMPTY", value: "" }],
    }],
  },
} as unknown as Pod;

function view(name: string, state: string) {
  return { name, state } as unknown as PodRuntimeStatus["containers"][number];
}

Deno.test("containerVolumeMounts() counts running, unknown and just-started containers as running", async () => {
  const volumes = recorder();
  await containerVolumeMounts(volumes, {
    pod,
    container: pod.spec.containers[0]!,
    status: {
      containers: [
        view("a", "running"),
        view("b", "unknown"),
        view("c", "exited"),
        view("d", "created"),
      ],
    } as unknown as PodRuntimeStatus,
    podIPs: [],
    nodeName: "n",
    started: new Set(["e"]),
  });
  assert.deepEqual([...volumes.seen[0]!.running].sort(), ["a", "b", "e"]);
  assert.equal(volumes.seen[0]!.expand("$(DIR)/x"), "logs/x");
  assert.throws(
    () => volumes.seen[0]!.expand("$(EMPTY)/$(NOPE)"),
    /missing value for EMPTY, NOPE/,
  );
});
