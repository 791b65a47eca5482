/**
 * Pods from the API server on real containerd and the local control plane, seen through
 * kubectl with the admin kubeconfig: kubelet.ts joins with the bootstrap kubeconfig, runs a pod
 * bound with `spec.nodeName` and one placed by the scheduler, reports their status (Running,
 * podIP, container states), stops a `kubectl delete`d pod gracefully and removes its object,
 * and rejects a pod asking for more cpu than the node has (OutOfcpu).
 *
 * The kubelet runs in-process on the shared containerd without orphan clean-up (other tests'
 * pods live there too); its node and namespace are `h1-api-<random>` and are deleted at the
 * end with everything the test created.
 */
import assert from "node:assert/strict";
import { startApiKubelet } from "./_api_kubelet.ts";
import {
  cluster,
  clusterMissing,
  conditionTrue,
  CRI_ENDPOINT,
  CRI_IMAGE,
  getJson,
  kubectl,
  run,
  waitFor,
} from "./_cluster.ts";

interface PodJson {
  metadata: { uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: {
    phase?: string;
    reason?: string;
    message?: string;
    podIP?: string;
    hostIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      name: string;
      ready: boolean;
      state: Record<string, Record<string, unknown>>;
    }[];
  };
}

/** A pod whose container exits at once on SIGTERM (so a graceful stop is quick). */
function podManifest(
  name: string,
  namespace: string,
  placement: Record<string, unknown>,
  resources: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: {
      ...placement,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 5,
      containers: [{
        name: "main",
        image: CRI_IMAGE,
        imagePullPolicy: "IfNotPresent",
        command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"],
        resources,
      }],
    },
  });
}

async function apply(manifest: string): Promise<void> {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(path, manifest);
  await kubectl("apply", "-f", path);
  await Deno.remove(path);
}

const running = (p: PodJson | undefined) =>
  p?.status.phase === "Running" && p.status.podIP &&
    p.status.containerStatuses?.[0]?.state.running
    ? p
    : undefined;

Deno.test({
  name:
    "kubelet.ts runs the pods the API server binds to its node, reports their status, deletes gracefully and rejects what does not fit",
  ignore: clusterMissing !== undefined || CRI_ENDPOINT === "",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const k = await startApiKubelet("h1-api", {
      criEndpoint: CRI_ENDPOINT,
      nodeIP: "127.0.0.1",
    });
    const { node, logger, runtime } = k;
    const ns = node;
    try {
      await apply(podManifest("bound", ns, { nodeName: node }));
      await apply(
        podManifest("scheduled", ns, {
          nodeSelector: { "kubernetes.io/hostname": node },
        }),
      );
      const started = Date.now();
      for (const name of ["bound", "scheduled"]) {
        const pod = await waitFor(
          `pod ${name} Running`,
          async () => running(await getJson<PodJson>("pod", "-n", ns, name)),
          60_000,
        );
        assert.equal(pod.spec.nodeName, node);
        assert.match(pod.status.podIP ?? "", /^\d+\.\d+\.\d+\.\d+$/);
        assert.ok(pod.status.hostIP);
        assert.ok(conditionTrue(pod, "PodScheduled"));
        assert.equal(pod.status.containerStatuses?.[0]?.name, "main");
      }
      const toRunning = Date.now() - started;
      await waitFor("pods Ready", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "bound");
        return conditionTrue(p, "Ready") ? p : undefined;
      }, 30_000);

      // A steady pod costs no writes: full passes every 2 s find nothing to send.
      const writes = () =>
        logger.records.filter((r) =>
          r.msg === "Patched pod status" && r.fields.pod === `${ns}/bound`
        ).length;
      const before = writes();
      await new Promise((r) => setTimeout(r, 4_500));
      assert.equal(
        writes(),
        before,
        `status rewritten while nothing changed: ${
          JSON.stringify(
            logger.records.filter((r) => r.msg === "Patched pod status").map((
              r,
            ) => r.fields),
          )
        }`,
      );

      // Graceful deletion: SIGTERM ends the container at once, the kubelet writes the final
      // status and deletes the object (grace 0, UID precondition).
      const deleteStart = Date.now();
      const del = await run(`${cluster.bin}/kubectl`, [
        "--kubeconfig",
        cluster.kubeconfig,
        "-n",
        ns,
        "delete",
        "pod",
        "bound",
        "--grace-period=5",
        "--wait=true",
        "--timeout=60s",
      ]);
      assert.equal(del.code, 0, del.stderr);
      const deleteMs = Date.now() - deleteStart;
      assert.equal(await getJson("pod", "-n", ns, "bound"), undefined);
      // the container exited by itself on SIGTERM (0), well before the 5 s grace ran out
      assert.ok(deleteMs < 5_000, `delete took ${deleteMs} ms`);
      const { containers } = await runtime.listContainers({
        filter: { labelSelector: { "io.kubernetes.pod.namespace": ns } },
      });
      const boundContainers = containers.filter((c) =>
        c.labels["io.kubernetes.pod.name"] === "bound"
      );
      assert.ok(boundContainers.every((c) => c.state !== 1), "still running");

      // Admission: a pod that cannot fit is Failed with upstream's reason.
      await apply(
        podManifest("huge", ns, { nodeName: node }, {
          requests: { cpu: "100000" },
        }),
      );
      const huge = await waitFor("pod huge rejected", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "huge");
        return p?.status.phase === "Failed" ? p : undefined;
      }, 30_000);
      assert.equal(huge.status.reason, "OutOfcpu");
      assert.match(
        huge.status.message ?? "",
        /^Pod was rejected: Node didn't have enough resource: cpu, requested: 100000000, used: \d+, capacity: \d+$/,
      );
      // deno-lint-ignore no-console
      console.log(
        `api pods: created → Running (2 pods) ${toRunning} ms, graceful delete → gone ${deleteMs} ms`,
      );
    } finally {
      await k.stop();
    }
  },
});
