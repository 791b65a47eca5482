// deno-lint-ignore-file no-console
/**
 * Simulated runtime cost: start 1000 pods (sandbox + one container each),
 * list them with a label selector 100 times, then stop and remove them all.
 * Target: the whole cycle under 1000 ms (the sim must stay cheap for
 * 1000-pod kubelet tests).
 */
import { createSimRuntime } from "../src/runtime/sim/mod.ts";

const PODS = 1000;
const TARGET_MS = 1000;

const runtime = createSimRuntime();
await runtime.pullImage({ image: { image: "busybox" } });
const start = performance.now();
const sandboxes: string[] = [];
for (let i = 0; i < PODS; i++) {
  const uid = `uid-${i}`;
  const { podSandboxId } = await runtime.runPodSandbox({
    config: {
      metadata: { name: `pod-${i}`, uid, namespace: "default" },
      labels: { "io.kubernetes.pod.uid": uid },
    },
  });
  const { containerId } = await runtime.createContainer({
    podSandboxId,
    config: {
      metadata: { name: "app" },
      image: { image: "busybox" },
      command: ["sleep", "3600"],
      labels: { "io.kubernetes.pod.uid": uid },
    },
  });
  await runtime.startContainer({ containerId });
  sandboxes.push(podSandboxId);
}
const started = performance.now();
for (let i = 0; i < 100; i++) {
  await runtime.listContainers({
    filter: { labelSelector: { "io.kubernetes.pod.uid": `uid-${i * 7}` } },
  });
}
const listed = performance.now();
for (const podSandboxId of sandboxes) {
  await runtime.stopPodSandbox({ podSandboxId });
  await runtime.removePodSandbox({ podSandboxId });
}
const end = performance.now();
await runtime.close();

const total = end - start;
console.log(`sim: start ${PODS} pods: ${(started - start).toFixed(1)} ms`);
console.log(
  `sim: 100 label-selector lists over ${PODS} containers: ${
    (listed - started).toFixed(1)
  } ms`,
);
console.log(`sim: stop+remove ${PODS} pods: ${(end - listed).toFixed(1)} ms`);
console.log(
  `sim: total ${total.toFixed(1)} ms, target < ${TARGET_MS} ms, ratio ${
    (total / TARGET_MS).toFixed(2)
  } (${total < TARGET_MS ? "ok" : "SLOW"})`,
);
