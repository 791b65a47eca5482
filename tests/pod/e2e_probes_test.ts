/**
 * Container probes on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh);
 * skipped without it: exec probes through CRI `ExecSync`, httpGet and tcpSocket probes to the
 * pod IP on the CNI network.
 */
import assert from "node:assert/strict";
import type { PodStatus } from "../../src/pod/mod.ts";
import { endpoint, IMAGE, startE2e, waitFor } from "./_containerd_e2e.ts";

function manifest(name: string, container: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 2,
      containers: [{
        name: "app",
        image: IMAGE,
        imagePullPolicy: "IfNotPresent",
        ...container,
      }],
    },
  });
}

function last(statuses: PodStatus[]): PodStatus | undefined {
  return statuses[statuses.length - 1];
}

Deno.test({
  name:
    "containerd: a liveness exec probe restarts a container whose health file disappears",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await e.write(
      "live.yaml",
      manifest("live", {
        command: [
          "sh",
          "-c",
          "touch /tmp/healthy; sleep 3; rm /tmp/healthy; sleep 3600",
        ],
        livenessProbe: {
          exec: { command: ["cat", "/tmp/healthy"] },
          periodSeconds: 1,
          failureThreshold: 2,
        },
      }),
    );
    await waitFor("a liveness restart", () => {
      const s = last(e.statuses("live"));
      return (s?.containerStatuses?.[0]?.restartCount ?? 0) >= 1
        ? true
        : undefined;
    }, 60_000);
    const failed = e.logger.records.find((r) =>
      r.msg === "Probe failed" && r.fields.probeType === "Liveness"
    );
    assert.match(String(failed?.fields.output), /No such file|can't open/);
  },
});

Deno.test({
  name:
    "containerd: httpGet readiness and tcpSocket liveness probes reach the pod IP",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await e.write(
      "web.yaml",
      manifest("web", {
        command: ["httpd", "-f", "-p", "8080", "-h", "/etc"],
        ports: [{ name: "http", containerPort: 8080 }],
        readinessProbe: {
          httpGet: { path: "/hostname", port: "http" },
          periodSeconds: 1,
        },
        livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
      }),
    );
    const ready = await waitFor("Ready=True", () => {
      const s = last(e.statuses("web"));
      const cond = s?.conditions?.find((c) => c.type === "Ready");
      return cond?.status === "True" ? s : undefined;
    }, 60_000);
    assert.ok(ready.podIP, "pod has an IP");
    assert.equal(ready.containerStatuses?.[0]?.ready, true);
    assert.equal(ready.containerStatuses?.[0]?.restartCount, 0);
    assert.equal(
      e.logger.records.filter((r) => r.msg === "Probe failed").length,
      0,
    );
  },
});
