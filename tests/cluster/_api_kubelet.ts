/**
 * An in-process kubelet.ts joined to the local control plane (scripts/cluster_env.sh) on the
 * shared containerd, running the pods the API server binds to it, with its kubelet API on
 * a free port of every address (the API server dials the node's InternalIP): what `kubectl exec/logs/port-forward`
 * and `kubectl get --raw .../proxy/...` reach through the API server. Its node and namespace
 * share one unique name; `stop()` deletes them, the test's sandboxes and its files.
 */
import { systemClock } from "../../src/clock/mod.ts";
import { joinCluster } from "../../src/join_cluster.ts";
import { runKubeletApi } from "../../src/kubelet_api.ts";
import { createKubelet } from "../../src/kubelet.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { createPodSyncer, createProbeResults } from "../../src/pod/mod.ts";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import { createPodStatusManager } from "../../src/status/mod.ts";
import { freePort } from "../server/_helpers.ts";
import {
  cluster,
  conditionTrue,
  getJson,
  kubectl,
  waitFor,
} from "./_cluster.ts";

/** A running kubelet.ts on the control plane. */
export interface ApiKubelet {
  /** Node name, also the namespace the test's pods go in. */
  node: string;
  logger: CaptureLogger;
  /** Deletes the namespace, the Node, its Lease, the sandboxes and the files. */
  stop(): Promise<void>;
}

/** Joins a kubelet named `<prefix>-<random>` and waits for its Node to turn Ready. */
export async function startApiKubelet(
  prefix: string,
  criEndpoint: string,
): Promise<ApiKubelet> {
  const node = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const dir = await Deno.makeTempDir({ prefix: `${node}-` });
  const stopping = new AbortController();
  const logger = new CaptureLogger();
  const runtime = createCriRuntime({
    endpoint: criEndpoint,
    timeoutMs: 60_000,
  });
  const port = freePort();
  const flags = {
    kubeconfig: `${dir}/kubelet.conf`,
    bootstrapKubeconfig: cluster.bootstrapKubeconfig,
    certDir: `${dir}/pki`,
    rootDir: `${dir}/root`,
  };
  let joined: Awaited<ReturnType<typeof joinCluster>> | undefined;
  let kubelet: ReturnType<typeof createKubelet> | undefined;
  let api: Promise<void> | undefined;
  const stop = async () => {
    await kubectl("delete", "namespace", node, "--wait=false")
      .catch(() => {});
    await kubelet?.stop();
    stopping.abort();
    await api;
    await joined?.stop();
    const listed = await runtime.listPodSandbox({}).catch(() => undefined);
    for (const s of listed?.items ?? []) {
      if (s.metadata?.namespace !== node) continue;
      await runtime.stopPodSandbox({ podSandboxId: s.id }).catch(() => {});
      await runtime.removePodSandbox({ podSandboxId: s.id }).catch(() => {});
    }
    await kubectl("delete", "node", node, "--ignore-not-found")
      .catch(() => {});
    await kubectl(
      "-n",
      "kube-node-lease",
      "delete",
      "lease",
      node,
      "--ignore-not-found",
    ).catch(() => {});
    await runtime.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    await kubectl("create", "namespace", node);
    joined = await joinCluster({ runtime, clock: systemClock, logger }, {
      nodeName: node,
      signal: stopping.signal,
      config: {
        port,
        nodeLeaseDurationSeconds: 4,
        nodeStatusUpdateFrequency: "1s",
        nodeStatusReportFrequency: "1m",
      },
      flags,
    });
    const statuses = createPodStatusManager();
    const probes = createProbeResults();
    const syncer = createPodSyncer({
      runtime,
      images: runtime,
      clock: systemClock,
      logger,
      statusManager: statuses,
      probes,
    }, {
      podLogsDir: `${dir}/logs`,
      rootDir: flags.rootDir,
      serializeImagePulls: true,
      nodeName: node,
      runtimeRequestTimeoutMs: 60_000,
    });
    const k = createKubelet({
      runtime,
      syncer,
      clock: systemClock,
      logger,
      probes: { runtime, statuses, results: probes },
      statuses,
      cluster: { pods: joined.pods, statuses, statusSyncPeriodMs: 2_000 },
    }, {
      nodeName: node,
      runtimeRequestTimeoutMs: 60_000,
      syncFrequencyMs: 5_000,
    });
    kubelet = k;
    k.start();
    api = runKubeletApi({
      clock: systemClock,
      logger,
      kubelet: k,
      statuses,
      runtime,
    }, {
      config: {
        // the API server dials the node's InternalIP (never loopback) at this port
        address: "0.0.0.0",
        port,
        podLogsDir: `${dir}/logs`,
        authentication: { x509: { clientCAFile: cluster.ca } },
        authorization: { mode: "Webhook" },
      },
      flags,
      nodeName: node,
      resyncIntervalMs: 5_000,
      signal: stopping.signal,
    });
    await waitFor("the Node to turn Ready", async () => {
      const n = await getJson("node", node);
      return conditionTrue(n, "Ready") ? n : undefined;
    }, 60_000);
    return { node, logger, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
