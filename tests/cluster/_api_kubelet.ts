/**
 * The one in-process kubelet.ts the API-mode e2e tests join to a control plane (the shared one
 * of scripts/cluster_env.sh unless told otherwise) on the shared containerd. It is wired as
 * src/kubelet/run_kubelet.ts wires it: pods from the API server, the status manager, sysctl and
 * resource admission against the reported Node, ConfigMaps/Secrets/tokens, Services (env vars), events, mirror pods
 * for static pods, and its kubelet API on a free port (the API server dials the node's
 * address: `kubectl exec/logs/port-forward` reach it). Node and namespace share one unique
 * name; `stop()` deletes them, the test's sandboxes, the node's events and its files.
 */
import { systemClock } from "../../src/clock/mod.ts";
import {
  joinCluster,
  type JoinClusterContext,
} from "../../src/kubelet/join_cluster.ts";
import { runKubeletApi } from "../../src/kubelet/serve_kubelet_api.ts";
import {
  createKubelet,
  type Kubelet,
} from "../../src/kubelet/create_kubelet.ts";
import type { PodEnvironmentOptions } from "../../src/pod/mod.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { type CsiNode, startCsiNode } from "../../src/csi/mod.ts";
import {
  createPodObjectManager,
  createServiceCache,
  createTokenManager,
  podUpdateRegistrar,
} from "../../src/objects/mod.ts";
import {
  createAllocationManager,
  createPodSyncer,
  createProbeResults,
  createSysctlAllowlist,
  dirCheckpointFiles,
  sysctlAdmission,
} from "../../src/pod/mod.ts";
import { createCriRuntime, type CriRuntime } from "../../src/runtime/mod.ts";
import { createPodStatusManager } from "../../src/status/mod.ts";
import { freePort } from "../server/_helpers.ts";
import {
  cluster,
  clusterMissing,
  conditionTrue,
  type ControlPlane,
  CRI_ENDPOINT,
  CRI_IMAGE,
  deleteNode,
  kubectl,
  kubectlOn,
  waitFor,
} from "./_cluster.ts";
import { removeTree } from "../_mounts.ts";

/** Why a test of {@linkcode startApiKubelet} on the shared environments cannot run here. */
export const apiKubeletMissing: string | undefined = clusterMissing ??
  (CRI_ENDPOINT
    ? undefined
    : "no containerd: run `bash scripts/cri_env.sh up` and source /tmp/cri.env");

/** `kubectl create -f` of `object` (on the shared control plane), through a temporary file. */
export async function createObject(object: unknown): Promise<void> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, JSON.stringify(object));
    await kubectl("create", "-f", file);
  } finally {
    await Deno.remove(file);
  }
}

/**
 * A pod bound to `node` (also its namespace) whose container `main` runs `command` from the
 * shared image; `main` adds fields to that container.
 */
export function pinnedPod(
  name: string,
  node: string,
  command: string[],
  main: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: node },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: "main",
        image: CRI_IMAGE,
        imagePullPolicy: "IfNotPresent",
        command,
        ...main,
      }],
    },
  };
}

export interface ApiKubeletOptions {
  criEndpoint: string;
  /** The control plane to join (default: the shared one). */
  plane?: ControlPlane;
  /** --node-ip; also the pods' hostIPs. Unset: the node's addresses are detected. */
  nodeIP?: string;
  /** Where the kubelet API listens (default 0.0.0.0: the API server dials the node's IP). */
  apiAddress?: string;
  /** A static pod directory, read every second. */
  staticPodPath?: string;
  /** Overrides of the short test frequencies (4 s lease, status every second). */
  config?: Partial<JoinClusterContext["config"]>;
  /** The status manager's full pass (default 2 s). */
  statusSyncPeriodMs?: number;
  /** Wait for the Node to turn Ready before returning (default true). */
  waitReady?: boolean;
  /** The pod syncer's node environment, given the kubelet's root dir (default: none). */
  environment?: (rootDir: string) => PodEnvironmentOptions;
  /** In-place resize with its checkpoints in the root dir (default: off). */
  resize?: boolean;
}

/** A running kubelet.ts on the control plane. */
export interface ApiKubelet {
  /** Node name, also the namespace the test's pods go in. */
  node: string;
  logger: CaptureLogger;
  /** The test's scratch directory (the kubelet's files are under it). */
  dir: string;
  podLogsDir: string;
  runtime: CriRuntime;
  kubelet: Kubelet;
  joined: Awaited<ReturnType<typeof joinCluster>>;
  /** Deletes the namespace, the Node, its Lease, the sandboxes and the files. */
  stop(): Promise<void>;
}

/** Joins a kubelet named `<prefix>-<random>` and (by default) waits for its Node to turn Ready. */
export async function startApiKubelet(
  prefix: string,
  options: ApiKubeletOptions,
): Promise<ApiKubelet> {
  const plane = options.plane ?? cluster;
  const ctl = kubectlOn(plane);
  const { kubectl, getJson } = ctl;
  const node = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const dir = await Deno.makeTempDir({ prefix: `${node}-` });
  const podLogsDir = `${dir}/logs`;
  const stopping = new AbortController();
  const logger = new CaptureLogger();
  const runtime = createCriRuntime({
    endpoint: options.criEndpoint,
    timeoutMs: 60_000,
  });
  const port = freePort();
  const flags = {
    kubeconfig: `${dir}/kubelet.conf`,
    bootstrapKubeconfig: plane.bootstrapKubeconfig,
    certDir: `${dir}/pki`,
    rootDir: `${dir}/root`,
    ...(options.nodeIP ? { nodeIP: options.nodeIP } : {}),
  };
  // the kubelet is created after joining; the mirror pod manager reads its pods late
  const late: { kubelet?: Kubelet } = {};
  let joined: Awaited<ReturnType<typeof joinCluster>> | undefined;
  let objects: ReturnType<typeof createPodObjectManager> | undefined;
  let api: Promise<void> | undefined;
  let serviceSync: Promise<void> | undefined;
  let csiNode: CsiNode | undefined;
  const stop = async () => {
    await kubectl("delete", "namespace", node, "--wait=false")
      .catch(() => {});
    await late.kubelet?.stop();
    stopping.abort();
    await api;
    await serviceSync;
    await csiNode?.stop();
    objects?.close();
    await joined?.stop();
    const listed = await runtime.listPodSandbox({}).catch(() => undefined);
    for (const s of listed?.items ?? []) {
      // the test's namespace, and static pods (named `<name>-<node>`)
      const ours = s.metadata?.namespace === node ||
        s.metadata?.name.endsWith(`-${node}`);
      if (!ours) continue;
      await runtime.stopPodSandbox({ podSandboxId: s.id }).catch(() => {});
      await runtime.removePodSandbox({ podSandboxId: s.id }).catch(() => {});
    }
    await kubectl(
      "delete",
      "events",
      "-n",
      "default",
      "--field-selector",
      `involvedObject.name=${node}`,
    ).catch(() => {});
    await deleteNode(node, ctl);
    await runtime.close();
    await removeTree(dir).catch(() => {});
  };
  try {
    await kubectl("create", "namespace", node);
    const j = await joinCluster({
      runtime,
      clock: systemClock,
      logger,
      pods: {
        all: () => late.kubelet?.podConfig.pods() ?? [],
        sourcesReady: () => late.kubelet?.podConfig.allSourcesReady() ?? false,
        isTerminatingByFullName: (name) =>
          late.kubelet?.workers.isTerminatingByFullName(name) ?? false,
      },
    }, {
      nodeName: node,
      signal: stopping.signal,
      config: {
        port,
        nodeLeaseDurationSeconds: 4,
        nodeStatusUpdateFrequency: "1s",
        nodeStatusReportFrequency: "1m",
        ...options.config,
      },
      flags,
    });
    joined = j;
    const o = createPodObjectManager({
      api: j.objects,
      clock: systemClock,
      logger,
    });
    objects = o;
    const services = createServiceCache({
      api: j.services,
      clock: systemClock,
      logger,
    });
    serviceSync = services.run(stopping.signal);
    const csi = await startCsiNode({
      logger,
      api: j.storage,
      nodeUid: () => j.agent.reporter.nodeUid,
      objects: o,
    }, { rootDir: flags.rootDir, nodeName: node });
    csiNode = csi;
    const statuses = createPodStatusManager();
    const probes = createProbeResults();
    const allocations = options.resize
      ? createAllocationManager({
        files: dirCheckpointFiles(flags.rootDir),
        clock: systemClock,
        logger,
      })
      : undefined;
    if (allocations) {
      await Deno.mkdir(flags.rootDir, { recursive: true });
      await allocations.load();
    }
    const syncer = createPodSyncer({
      runtime,
      images: runtime,
      ...(allocations ? { allocations } : {}),
      clock: systemClock,
      logger,
      statusManager: statuses,
      probes,
      events: j.events,
      claims: j.storage,
      csi: csi.volumes,
      objects: o,
      services,
      tokens: createTokenManager({
        api: j.objects,
        clock: systemClock,
        logger,
      }),
    }, {
      podLogsDir,
      rootDir: flags.rootDir,
      ...(options.environment
        ? { environment: options.environment(flags.rootDir) }
        : {}),
      serializeImagePulls: true,
      nodeName: node,
      ...(options.nodeIP ? { hostIPs: [options.nodeIP] } : {}),
      runtimeRequestTimeoutMs: 60_000,
    });
    const mirrors = j.mirrors!;
    const k = createKubelet({
      runtime,
      syncer,
      clock: systemClock,
      logger,
      probes: { runtime, statuses, results: probes },
      statuses,
      ...(allocations ? { allocations } : {}),
      admission: sysctlAdmission(createSysctlAllowlist([]), statuses),
      cluster: {
        pods: j.pods,
        statuses,
        node: () => j.agent.reporter.node,
        statusSyncPeriodMs: options.statusSyncPeriodMs ?? 2_000,
        onPodUpdate: podUpdateRegistrar(o),
        mirrorPodOf: (pod) => mirrors.mirrorPodOf(pod),
        onMirrorPods: (pods) => mirrors.observeMirrorPods(pods),
      },
    }, {
      nodeName: node,
      runtimeRequestTimeoutMs: 60_000,
      syncFrequencyMs: 5_000,
      ...(options.staticPodPath
        ? {
          staticPodPath: options.staticPodPath,
          fileCheckFrequencyMs: 1_000,
          watchManifests: false,
        }
        : {}),
    });
    late.kubelet = k;
    k.start();
    api = runKubeletApi({
      clock: systemClock,
      logger,
      kubelet: k,
      statuses,
      runtime,
    }, {
      config: {
        address: options.apiAddress ?? "0.0.0.0",
        port,
        podLogsDir,
        authentication: { x509: { clientCAFile: plane.ca } },
        authorization: { mode: "Webhook" },
      },
      flags,
      nodeName: node,
      resyncIntervalMs: 5_000,
      signal: stopping.signal,
    });
    if (options.waitReady ?? true) {
      await waitFor("the Node to turn Ready", async () => {
        const n = await getJson("node", node);
        return conditionTrue(n, "Ready") ? n : undefined;
      }, 60_000);
    }
    return {
      node,
      logger,
      dir,
      podLogsDir,
      runtime,
      kubelet: k,
      joined: j,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
