/**
 * API server mode wiring: when `--kubeconfig` or `--bootstrap-kubeconfig` is set, connect
 * (TLS bootstrap first when needed) and start the node agent (registration, node status,
 * lease), the event recorder and the mirror pods of static pods. Without either the kubelet stays standalone and this module is never loaded.
 * No business logic lives here.
 * @module
 */
import {
  CLIENT_PAIR_CURRENT,
  ClientCertificateRotator,
  connectApiServer,
  type CsrApi,
} from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { CriRuntime } from "../runtime/mod.ts";
import {
  createNodeAgent,
  createNodeFacts,
  goArch,
  type NodeAgent,
  type NodeFacts,
} from "../status/mod.ts";
import { parseGoDuration } from "../util/go_duration.ts";
import type {
  ObjectApi,
  Pod,
  PodApi,
  RuntimeClassApi,
  ServiceApi,
  StorageApi,
  Taint,
} from "../api/mod.ts";
import {
  createEventRecorder,
  type EventRecorder,
  nodeReference,
} from "../events/mod.ts";
import { MirrorPodManager } from "../pod/mod.ts";

/** The configuration and flags API server mode reads. */
export interface JoinClusterContext {
  config: {
    registerNode?: boolean | undefined;
    registerWithTaints?:
      | {
        key: string;
        value?: string | undefined;
        effect: string;
        timeAdded?: string | null | undefined;
      }[]
      | undefined;
    maxPods?: number | undefined;
    nodeStatusMaxImages?: number | undefined;
    port?: number | undefined;
    nodeStatusUpdateFrequency?: string | undefined;
    nodeStatusReportFrequency?: string | undefined;
    nodeLeaseDurationSeconds?: number | undefined;
    kubeAPIQPS?: number | undefined;
    kubeAPIBurst?: number | undefined;
    evictionHard?: Record<string, string> | undefined;
    kubeReserved?: Record<string, string> | undefined;
    systemReserved?: Record<string, string> | undefined;
    enableControllerAttachDetach?: boolean | undefined;
    rotateCertificates?: boolean | undefined;
    providerID?: string | undefined;
    eventRecordQPS?: number | undefined;
    eventBurst?: number | undefined;
  };
  flags: {
    kubeconfig?: string | undefined;
    bootstrapKubeconfig?: string | undefined;
    certDir?: string | undefined;
    nodeIP?: string | undefined;
    nodeLabels?: Record<string, string> | undefined;
    rootDir?: string | undefined;
    reportedVersion?: string | undefined;
  };
}

function ms(value: string | undefined, fallback: number): number {
  return value ? parseGoDuration(value) : fallback;
}

/** What joining gives the rest of the kubelet. */
export interface JoinedCluster {
  agent: NodeAgent;
  pods: PodApi;
  objects: ObjectApi;
  services: ServiceApi;
  /** RuntimeClasses, for the handler of a pod's `runtimeClassName`. */
  runtimeClasses: RuntimeClassApi;
  /** PVCs, PVs and the CSI objects, for the pods' storage volumes. */
  storage: StorageApi;
  /** The kubelet's event recorder, writing to the API server. */
  events: EventRecorder;
  /** The mirror pod manager when `deps.pods` was given. */
  mirrors?: MirrorPodManager;
  /** Certificate signing requests with the node's identity (the serving certificate). */
  csr: CsrApi;
  stop(): Promise<void>;
}

/**
 * Connects to the API server and starts the node agent. Returns a stop function that
 * stops the agent and releases the connection. Rejects when the connection or bootstrap
 * fails (the kubelet then exits, as upstream does).
 */
export async function joinCluster(
  deps: {
    runtime: Pick<CriRuntime, "version" | "status" | "listImages">;
    clock: Clock;
    logger: Logger;
    /**
     * Every configured pod and whether all sources reported: given → the static ones get
     * mirror pods (the kubelet is created after joining, so these are read late).
     */
    pods?: {
      all(): readonly Pod[];
      sourcesReady(): boolean;
      /** A pod with this full name is stopping its containers (its mirror stays). */
      isTerminatingByFullName(fullName: string): boolean;
    };
    /** An error the node's Ready condition reports (graceful shutdown under way). */
    readinessError?: () => string | undefined;
    /** The node's pressure conditions now (the eviction manager's; read late too). */
    pressure?: () => readonly string[];
    /** Device plugin resources for capacity/allocatable (the device manager's). */
    devicePlugins?: () => NodeFacts["devicePlugins"];
  },
  ctx: JoinClusterContext & { nodeName: string; signal: AbortSignal },
): Promise<JoinedCluster> {
  const { config, flags } = ctx;
  const { clock, runtime } = deps;
  const logger = deps.logger.with({ component: "api-server" });
  const kubeconfigPath = flags.kubeconfig ?? "";
  if (!kubeconfigPath) {
    // Upstream writes the bootstrapped identity to --kubeconfig; without it there is
    // nowhere to keep it.
    throw new TypeError(
      "--bootstrap-kubeconfig needs --kubeconfig: the path where the kubelet writes its kubeconfig",
    );
  }
  const conn = await connectApiServer({ clock, logger }, {
    nodeName: ctx.nodeName,
    kubeconfigPath,
    ...(flags.bootstrapKubeconfig
      ? { bootstrapKubeconfigPath: flags.bootstrapKubeconfig }
      : {}),
    ...(flags.certDir ? { certDir: flags.certDir } : {}),
    client: {
      ...(config.kubeAPIQPS !== undefined ? { qps: config.kubeAPIQPS } : {}),
      ...(config.kubeAPIBurst !== undefined
        ? { burst: config.kubeAPIBurst }
        : {}),
    },
    signal: ctx.signal,
  });
  logger.info("Connected to the API server", {
    server: conn.connection.server,
  });
  const rootDir = flags.rootDir || "/var/lib/kubelet";
  // Upstream creates --root-dir at start-up (setupDataDirs); node status needs it to
  // measure the node's ephemeral storage.
  await Deno.mkdir(rootDir, { recursive: true, mode: 0o750 }).catch(() => {});
  const hostFacts = createNodeFacts({
    runtime: {
      version: async (signal) => {
        const v = await runtime.version({ version: "v1" }, { signal });
        return { runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion };
      },
      images: async (signal) => {
        const list = await runtime.listImages({}, { signal });
        return list.images.map((i) => ({
          repoDigests: i.repoDigests,
          repoTags: i.repoTags,
          sizeBytes: Number(i.size),
        }));
      },
      status: async (signal) => {
        const s = await runtime.status({ verbose: false }, { signal });
        return {
          conditions: (s.status?.conditions ?? []).map((c) => ({
            type: c.type,
            status: c.status,
            reason: c.reason,
            message: c.message,
          })),
          handlers: s.runtimeHandlers.map((h) => ({
            name: h.name,
            recursiveReadOnlyMounts: h.features?.recursiveReadOnlyMounts ===
              true,
            userNamespaces: h.features?.userNamespaces === true,
          })),
          ...(s.features
            ? {
              features: {
                supplementalGroupsPolicy: s.features.supplementalGroupsPolicy,
              },
            }
            : {}),
        };
      },
    },
    clock,
    logger,
    ...(deps.pressure ? { pressure: deps.pressure } : {}),
  }, {
    hostname: ctx.nodeName,
    ...(flags.nodeIP ? { nodeIP: flags.nodeIP } : {}),
    rootDir,
    maxPods: config.maxPods ?? 110,
    ...(config.nodeStatusMaxImages !== undefined
      ? { maxImages: config.nodeStatusMaxImages }
      : {}),
    kubeletPort: config.port ?? 10250,
    kubeletVersion: flags.reportedVersion || "v1.34.0",
    ...(config.evictionHard ? { evictionHard: config.evictionHard } : {}),
    ...(config.kubeReserved ? { kubeReserved: config.kubeReserved } : {}),
    ...(config.systemReserved ? { systemReserved: config.systemReserved } : {}),
  });
  const facts = async (signal: AbortSignal) => {
    const found = await hostFacts(signal);
    const shutdownError = deps.readinessError?.();
    const devicePlugins = deps.devicePlugins?.();
    return {
      ...found,
      ...(shutdownError ? { shutdownError } : {}),
      ...(devicePlugins ? { devicePlugins } : {}),
    };
  };
  // Events go through a writer of their own, paced by eventRecordQPS/eventBurst.
  const events = createEventRecorder({
    sink: conn.events,
    clock,
    logger: logger.with({ component: "events" }),
  }, {
    component: "kubelet",
    host: ctx.nodeName,
    ...(config.eventRecordQPS !== undefined
      ? { qps: config.eventRecordQPS }
      : {}),
    ...(config.eventBurst !== undefined ? { burst: config.eventBurst } : {}),
  });
  const stopBackground = new AbortController();
  const background = [events.run(stopBackground.signal)];
  const nodeRef = nodeReference(ctx.nodeName);
  events.event(nodeRef, "Normal", "Starting", "Starting kubelet.");
  const agent = createNodeAgent({
    api: conn.api,
    nodeWatch: conn.nodeWatch,
    clock,
    logger,
    facts,
    recordEvent: (type, reason, message) =>
      events.event(nodeRef, type, reason, message),
  }, {
    registration: {
      nodeName: ctx.nodeName,
      hostname: ctx.nodeName,
      os: "linux",
      arch: goArch(Deno.build.arch),
      nodeLabels: flags.nodeLabels ?? {},
      taints: (config.registerWithTaints ?? []).map((t): Taint => ({
        key: t.key,
        effect: t.effect,
        ...(t.value ? { value: t.value } : {}),
      })),
      ...(config.providerID ? { providerID: config.providerID } : {}),
      controllerAttachDetach: config.enableControllerAttachDetach ?? true,
    },
    registerNode: config.registerNode ?? true,
    updateFrequencyMs: ms(config.nodeStatusUpdateFrequency, 10_000),
    reportFrequencyMs: ms(config.nodeStatusReportFrequency, 300_000),
    leaseDurationSeconds: config.nodeLeaseDurationSeconds || 40,
  });
  // Admission reads the Node; until the API server has it, the local one stands in (static
  // pods are admitted while the API server cannot be reached).
  await agent.reporter.localNode(ctx.signal).catch(() => {});
  agent.start();
  const podsOf = deps.pods;
  const mirrors = podsOf
    ? new MirrorPodManager({
      api: conn.pods,
      clock,
      logger: logger.with({ component: "mirror-pods" }),
      pods: () => podsOf.all(),
      nodeUid: () => agent.reporter.nodeUid,
      sourcesReady: () => podsOf.sourcesReady(),
      isTerminatingByFullName: (name) => podsOf.isTerminatingByFullName(name),
    }, { nodeName: ctx.nodeName })
    : undefined;
  if (mirrors) background.push(mirrors.run(stopBackground.signal));
  const certDir = flags.certDir || "/var/lib/kubelet/pki";
  const stopRotation = new AbortController();
  let rotation: Promise<void> | undefined;
  // Rotation needs the identity to live in the --cert-dir pair (what bootstrap writes).
  if (
    config.rotateCertificates &&
    conn.connection.certFile === `${certDir}/${CLIENT_PAIR_CURRENT}` &&
    conn.connection.certPem
  ) {
    const rotator = new ClientCertificateRotator({
      clock,
      logger,
      api: conn.api,
      onRotated: (pair) =>
        conn.reconnect({ ...conn.connection, certPem: pair, keyPem: pair }),
    }, {
      nodeName: ctx.nodeName,
      certDir,
      currentPairPem: conn.connection.certPem,
    });
    rotation = rotator.run(stopRotation.signal);
  }
  return {
    agent,
    pods: conn.pods,
    objects: conn.objects,
    services: conn.services,
    runtimeClasses: conn.runtimeClasses,
    storage: conn.storage,
    events,
    csr: conn.api,
    ...(mirrors ? { mirrors } : {}),
    async stop() {
      stopRotation.abort();
      await rotation;
      stopBackground.abort();
      await Promise.all(background);
      await agent.stop();
      conn.close();
    },
  };
}
