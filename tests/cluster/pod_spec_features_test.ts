/**
 * Pod spec features that need the API server, on real containerd and the local control plane
 * with an in-process kubelet.ts (`startApiKubelet`):
 *
 * - service environment variables: a container sees `FOO_SERVICE_HOST`/`_PORT` of a Service
 *   of its namespace and `KUBERNETES_SERVICE_HOST` of `default/kubernetes`;
 * - `activeDeadlineSeconds` lowered on a running pod (as NodeConformance's "should allow
 *   activeDeadlineSeconds to be updated"): the pod fails with `DeadlineExceeded` and its
 *   container stops;
 * - readiness gates (as NodeConformance's "should support pod readiness gates"): Ready stays
 *   False with `ReadinessGatesNotReady` until the gate condition, patched in through the status
 *   subresource, is True; the kubelet's status writes keep that condition.
 *
 * Node and namespace are `h6-spec-<random>`, removed at the end with everything created.
 */
import assert from "node:assert/strict";
import { startApiKubelet } from "./_api_kubelet.ts";
import {
  apiKubeletMissing,
  CRI_ENDPOINT,
  CRI_IMAGE,
  getJson,
  kubectl,
  waitFor,
} from "./_cluster.ts";

const missing = apiKubeletMissing("pod_spec_features_test");

interface PodJson {
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
    }[];
    containerStatuses?: {
      state: { terminated?: { message?: string } };
    }[];
  };
}

async function create(object: Record<string, unknown>): Promise<void> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify(object));
  try {
    await kubectl("create", "-f", file);
  } finally {
    await Deno.remove(file);
  }
}

/** A busybox pod on `node` running `script` in container `main`. */
function shellPod(
  name: string,
  ns: string,
  node: string,
  script: string,
  spec: Record<string, unknown> = {},
) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: "main",
        image: CRI_IMAGE,
        imagePullPolicy: "IfNotPresent",
        command: ["sh", "-c", script],
      }],
      ...spec,
    },
  };
}

Deno.test({
  name: "API pods: service env vars, activeDeadlineSeconds and readiness gates",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const k = await startApiKubelet("h6-spec", {
      criEndpoint: CRI_ENDPOINT,
      nodeIP: "127.0.0.1",
      apiAddress: "127.0.0.1",
      statusSyncPeriodMs: 1_000,
    });
    const ns = k.node;
    const podStatus = async (name: string) =>
      (await getJson<PodJson>("pod", "-n", ns, name))?.status;
    try {
      await t.step("service env vars", async () => {
        await create({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "foo-svc", namespace: ns },
          spec: {
            ports: [{ name: "http", port: 8765, targetPort: 8080 }],
            selector: { app: "none" },
          },
        });
        const svc = await getJson<{ spec: { clusterIP: string } }>(
          "service",
          "-n",
          ns,
          "foo-svc",
        );
        const kube = await getJson<{ spec: { clusterIP: string } }>(
          "service",
          "-n",
          "default",
          "kubernetes",
        );
        await create(shellPod(
          "env",
          ns,
          k.node,
          "env | grep -E '^(FOO_SVC|KUBERNETES)_' | sort > /dev/termination-log",
          { restartPolicy: "Never" },
        ));
        const done = await waitFor("the env pod to finish", async () => {
          const s = await podStatus("env");
          return s?.phase === "Succeeded" ? s : undefined;
        }, 60_000);
        const vars = new Map(
          (done.containerStatuses?.[0]?.state.terminated?.message ?? "")
            .split("\n").filter((l) => l).map((l) => {
              const i = l.indexOf("=");
              return [l.slice(0, i), l.slice(i + 1)];
            }),
        );
        assert.equal(vars.get("FOO_SVC_SERVICE_HOST"), svc!.spec.clusterIP);
        assert.equal(vars.get("FOO_SVC_SERVICE_PORT"), "8765");
        assert.equal(vars.get("FOO_SVC_SERVICE_PORT_HTTP"), "8765");
        assert.equal(
          vars.get("FOO_SVC_PORT_8765_TCP"),
          `tcp://${svc!.spec.clusterIP}:8765`,
        );
        assert.equal(
          vars.get("KUBERNETES_SERVICE_HOST"),
          kube!.spec.clusterIP,
        );
        assert.equal(vars.get("KUBERNETES_SERVICE_PORT"), "443");
      });
      await t.step(
        "activeDeadlineSeconds, shortened on a running pod",
        async () => {
          await create(shellPod("deadline", ns, k.node, "sleep 3600", {
            activeDeadlineSeconds: 5000,
          }));
          await waitFor(
            "the deadline pod to run",
            async () =>
              (await podStatus("deadline"))?.phase === "Running" || undefined,
            60_000,
          );
          await kubectl(
            "-n",
            ns,
            "patch",
            "pod",
            "deadline",
            "--type=merge",
            "-p",
            JSON.stringify({ spec: { activeDeadlineSeconds: 2 } }),
          );
          const failed = await waitFor("DeadlineExceeded", async () => {
            const s = await podStatus("deadline");
            return s?.phase === "Failed" ? s : undefined;
          }, 30_000);
          assert.equal(failed.reason, "DeadlineExceeded");
          assert.equal(
            failed.message,
            "Pod was active on the node longer than the specified deadline",
          );
          // its container was stopped
          await waitFor("the container to stop", async () => {
            const s = await getJson<{
              status?: {
                containerStatuses?: { state: { terminated?: unknown } }[];
              };
            }>("pod", "-n", ns, "deadline");
            return s?.status?.containerStatuses?.[0]?.state.terminated
              ? true
              : undefined;
          }, 30_000);
        },
      );
      await t.step(
        "readiness gates set through the status subresource",
        async () => {
          const gate = "kts.example.com/gate";
          await create(shellPod("gated", ns, k.node, "sleep 3600", {
            readinessGates: [{ conditionType: gate }],
          }));
          const condition = (s: PodJson["status"], type: string) =>
            s?.conditions?.find((c) => c.type === type);
          const blocked = await waitFor("the gated pod to run", async () => {
            const s = await podStatus("gated");
            return s?.phase === "Running" &&
                condition(s, "ContainersReady")?.status === "True"
              ? s
              : undefined;
          }, 60_000);
          const ready = condition(blocked, "Ready");
          assert.equal(ready?.status, "False");
          assert.equal(ready?.reason, "ReadinessGatesNotReady");
          assert.equal(
            ready?.message,
            `corresponding condition of pod readiness gate "${gate}" does not exist.`,
          );
          const setGate = (status: string) =>
            kubectl(
              "-n",
              ns,
              "patch",
              "pod",
              "gated",
              "--subresource=status",
              "--type=strategic",
              "-p",
              JSON.stringify({
                status: { conditions: [{ type: gate, status }] },
              }),
            );
          await setGate("True");
          await waitFor(
            "Ready to turn True",
            async () =>
              condition(await podStatus("gated"), "Ready")?.status === "True" ||
              undefined,
            30_000,
          );
          // the kubelet's later status writes keep the gate condition it does not own
          await new Promise((r) => setTimeout(r, 2_500));
          const kept = await podStatus("gated");
          assert.equal(condition(kept, gate)?.status, "True");
          assert.equal(condition(kept, "Ready")?.status, "True");
          await setGate("False");
          await waitFor(
            "Ready to turn False again",
            async () =>
              condition(await podStatus("gated"), "Ready")?.status ===
                "False" ||
              undefined,
            30_000,
          );
        },
      );
    } finally {
      await k.stop();
    }
  },
});
