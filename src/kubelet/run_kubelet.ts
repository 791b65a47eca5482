/**
 * The standalone kubelet as `main.ts` starts it: turns a parsed configuration into the
 * dependencies of {@linkcode createKubelet} (runtime, syncer, sources), runs until the signal
 * aborts and returns the exit code.
 *
 * @module
 */

import type { Node, Pod } from "../api/mod.ts";
import { shareRootDir } from "./share_root_dir.ts";
import { systemClock } from "../clock/mod.ts";
import type { JoinClusterContext, JoinedCluster } from "./join_cluster.ts";
import { type KubeletApiContext, runKubeletApi } from "./serve_kubelet_api.ts";
import { createKubelet, type Kubelet } from "./create_kubelet.ts";
import type { Logger } from "../log/mod.ts";
import {
  apiRuntimeHandlers,
  appArmorHostError,
  createAllocationManager,
  createContainerGc,
  createContainerLogs,
  createImageGc,
  createNodeLogins,
  createPodSyncer,
  createProbeResults,
  createSysctlAllowlist,
  dirCheckpointFiles,
  type HostFiles,
  imageGcEnabled,
  type ImageGcPolicy,
  listRunningPods,
  type NodeLoginSource,
  type PodEnvironmentConfig,
  readPodEnvironmentOptions,
  RuntimeStatusCache,
  sysctlAdmission,
  withAppArmorAdmission,
  withUnsupportedFieldRefusal,
} from "../pod/mod.ts";
import {
  type ChangeDetectionStrategy,
  createPodObjectManager,
  createServiceCache,
  createTokenManager,
  podUpdateRegistrar,
} from "../objects/mod.ts";
import type { MirrorPodManager, PodAdmission } from "../pod/mod.ts";
import type { CriRuntime } from "../runtime/mod.ts";
import { runHealthzServer } from "../server/mod.ts";
import { createPodStatusManager, resolveNodeIPs } from "../status/mod.ts";
import { parseGoDuration } from "../util/go_duration.ts";
import {
  createMemoryVolumes,
  memoryVolumeDirFor,
  type SubPathBinds,
} from "../volume/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import { nodeReference } from "../events/mod.ts";
import { fsFigures } from "./stats_summary.ts";
import {
  type NodeShutdownConfig,
  nodeShutdownManager,
} from "./node_shutdown.ts";
import type { NodeShutdownManager } from "../node_shutdown/mod.ts";
import { createFeatureGates } from "../features/mod.ts";
import {
  createUserNamespaceManager,
  kubeletIdRange,
  podDirFiles,
  statusHandlerSource,
  SYSTEM_ID_RANGE_HOST,
  type UserNamespaceManager,
} from "../userns/mod.ts";
import {
  type EvictionConfig,
  type LateEviction,
  startEviction,
} from "./start_eviction.ts";
import { withPressureAdmission } from "../eviction/mod.ts";
import type { CsiVolumeHost } from "../storage/mod.ts";
import { withDeviceAdmission } from "../device_plugin/mod.ts";
import { startDeviceManager } from "./device_plugins.ts";

/** The parts of the CLI's `StartContext` the standalone kubelet reads. */
export interface KubeletRunContext {
  /** Pod cgroups, DNS and hosts files come from `PodEnvironmentConfig`. */
  config: PodEnvironmentConfig & EvictionConfig & {
    staticPodPath?: string | undefined;
    staticPodURL?: string | undefined;
    staticPodURLHeader?: Record<string, string[]> | undefined;
    fileCheckFrequency?: string | undefined;
    httpCheckFrequency?: string | undefined;
    syncFrequency?: string | undefined;
    containerRuntimeEndpoint?: string | undefined;
    imageServiceEndpoint?: string | undefined;
    runtimeRequestTimeout?: string | undefined;
    podLogsDir?: string | undefined;
    serializeImagePulls?: boolean | undefined;
    maxParallelImagePulls?: number | undefined;
    /** Default 127.0.0.1, as the permission plan assumes. */
    healthzBindAddress?: string | undefined;
    /** Default 10248, as the permission plan assumes; 0 turns the healthz listener off. */
    healthzPort?: number | undefined;
    containerLogMaxSize?: string | undefined;
    containerLogMaxFiles?: number | undefined;
    containerLogMaxWorkers?: number | undefined;
    containerLogMonitorInterval?: string | undefined;
    /** Sysctls pods may set beyond the safe set (names or `prefix*`). */
    allowedUnsafeSysctls?: string[] | undefined;
    /** `userNamespaces.idsPerPod`: the IDs of a pod's user namespace (default 65536). */
    userNamespaces?: { idsPerPod?: number | undefined } | undefined;
    configMapAndSecretChangeDetectionStrategy?: string | undefined;
    /** Image GC policy (defaults 85 %, 80 %, 2m, 0 = no maximum age). */
    imageGCHighThresholdPercent?: number | undefined;
    imageGCLowThresholdPercent?: number | undefined;
    imageMinimumGCAge?: string | undefined;
    imageMaximumGCAge?: string | undefined;
  } & NodeShutdownConfig;
  /** Feature gates (graceful node shutdown reads two); omitted → upstream's defaults. */
  featureGates?: { enabled(name: string): boolean };
  flags: {
    hostnameOverride?: string | undefined;
    /** `--root-dir`: termination-message files live under `<rootDir>/pods/`. */
    rootDir?: string | undefined;
    /** `--minimum-container-ttl-duration` (container GC `MinAge`, default 0). */
    minimumContainerTTLDuration?: string | undefined;
    /** `--maximum-dead-containers-per-container` (default 1). */
    maxPerPodContainerCount?: number | undefined;
    /** `--maximum-dead-containers` (default -1: no limit). */
    maxContainerCount?: number | undefined;
    /** `--pod-infra-container-image`: kept by image GC (runtimes that do not pin it). */
    podInfraContainerImage?: string | undefined;
    /** `--image-credential-provider-config` and `--image-credential-provider-bin-dir`. */
    imageCredentialProviderConfig?: string | undefined;
    imageCredentialProviderBinDir?: string | undefined;
  };
  logger: Logger;
  signal: AbortSignal;
}

/**
 * Where the healthz listener binds: `healthzBindAddress`:`healthzPort` with the defaults the
 * permission plan grants (127.0.0.1:10248); port 0 means no listener.
 */
export function healthzListenAddress(
  config: KubeletRunContext["config"],
): { hostname: string; port: number } {
  return {
    hostname: config.healthzBindAddress || "127.0.0.1",
    port: config.healthzPort ?? 10248,
  };
}

/** Node name: the lower-cased hostname override, else the host name. */
export function resolveNodeName(hostnameOverride: string | undefined): string {
  const name = hostnameOverride?.trim() || Deno.hostname();
  return name.trim().toLowerCase();
}

/** The kernel release for the safe sysctl list; unknown when `osRelease` is not granted. */
function kernelRelease(): string | undefined {
  try {
    return Deno.osRelease();
  } catch {
    return undefined;
  }
}

function objectStrategy(value: string | undefined): ChangeDetectionStrategy {
  if (!value) return "Watch";
  if (value === "Watch" || value === "Cache" || value === "Get") return value;
  throw new RangeError(
    `Invalid kubelet configuration field "configMapAndSecretChangeDetectionStrategy": "${value}"; use Watch, Cache or Get`,
  );
}

/** Static pods' statuses go to their mirror pods; the API source reports the mirrors. */
function mirrorHooks(mirrors: MirrorPodManager) {
  return {
    mirrorPodOf: (pod: Pod) => mirrors.mirrorPodOf(pod),
    onMirrorPods: (pods: Pod[]) => mirrors.observeMirrorPods(pods),
  };
}

/**
 * Upstream `ImageFsStats`: the image filesystem's capacity and free bytes, from `statfs` of
 * the mount point CRI `ImageFsInfo` names (upstream asks cadvisor for the same figures).
 */
async function imageFsStats(
  runtime: Pick<CriRuntime, "imageFsInfo">,
  host: HostFiles | undefined,
): Promise<{ capacityBytes: number; availableBytes: number }> {
  const info = await runtime.imageFsInfo({});
  const mountpoint = info.imageFilesystems[0]?.fsId?.mountpoint ?? "";
  if (!mountpoint) {
    throw new Error("The runtime reports no image filesystem mount point");
  }
  // the cgroup agent (or every permission) reaches the mount point the lists do not grant
  if (host) {
    const { capacityBytes, availableBytes } = await host.statfs(mountpoint);
    return { capacityBytes, availableBytes };
  }
  // Under path-scoped grants the runtime's mount point is usually outside the lists: ask
  // first, so a refusal is a clear image GC failure and never a denied access.
  if (
    Deno.permissions.querySync({ name: "read", path: mountpoint }).state !==
      "granted"
  ) {
    throw new Error(
      `Image garbage collection needs read access to the image filesystem mount point "${mountpoint}", which the permission lists do not grant`,
    );
  }
  const fs = await fsFigures(mountpoint);
  if (!fs) {
    throw new Error(
      `Cannot read the filesystem of the image filesystem mount point "${mountpoint}"`,
    );
  }
  return fs;
}

function durationMs(
  value: string | undefined,
  field: string,
  fallback: number,
): number {
  if (!value) return fallback;
  try {
    return parseGoDuration(value);
  } catch (cause) {
    throw new RangeError(
      `Invalid kubelet configuration field "${field}": ${
        (cause as Error).message
      }`,
      { cause },
    );
  }
}

/**
 * Runs the standalone kubelet until `ctx.signal` aborts. Returns 0 after a clean stop
 * (containers keep running, as upstream), 1 when the runtime cannot be set up.
 */
export async function runKubelet(
  ctx: KubeletRunContext & JoinClusterContext & KubeletApiContext,
): Promise<number> {
  const { config, logger } = ctx;
  const clock = systemClock;
  const nodeName = resolveNodeName(ctx.flags.hostnameOverride);
  const memoryVolumeDir = memoryVolumeDirFor(
    ctx.flags.rootDir || "/var/lib/kubelet",
  );
  const endpoint = config.containerRuntimeEndpoint ??
    "unix:///run/containerd/containerd.sock";
  const timeoutMs = durationMs(
    config.runtimeRequestTimeout,
    "runtimeRequestTimeout",
    120_000,
  );
  // a wrong plugin config stops the kubelet before it touches anything, as upstream's
  let nodeLogins: NodeLoginSource;
  try {
    nodeLogins = await createNodeLogins({
      rootDir: ctx.flags.rootDir || "/var/lib/kubelet",
      providerConfig: ctx.flags.imageCredentialProviderConfig ?? "",
      providerBinDir: ctx.flags.imageCredentialProviderBinDir ?? "",
    }, { clock, logger });
  } catch (cause) {
    logger.error("Cannot start the kubelet", { err: errorMessage(cause) });
    return 1;
  }
  let runtime: CriRuntime;
  try {
    if (endpoint.trim().toLowerCase().startsWith("sim://")) {
      const sim = await import("../runtime/sim/mod.ts");
      runtime = await sim.createSimRuntimeForEndpoint(endpoint, {
        clock,
        logger: logger.with({ component: "sim-runtime" }),
      });
    } else {
      const { createCriRuntime } = await import("../runtime/mod.ts");
      runtime = createCriRuntime({
        endpoint,
        ...(config.imageServiceEndpoint
          ? { imageEndpoint: config.imageServiceEndpoint }
          : {}),
        timeoutMs,
        logger,
      });
    }
  } catch (cause) {
    logger.error("Cannot set up the container runtime", {
      endpoint,
      err: errorMessage(cause),
    });
    return 1;
  }
  const { validateRuntimeConnection } = await import("../runtime/mod.ts");
  if (
    !(await validateRuntimeConnection(runtime, { endpoint, logger, timeoutMs }))
  ) {
    await runtime.close();
    return 1;
  }
  const devices = await startDeviceManager({ clock, logger }, {
    runtimeEndpoint: endpoint,
  });
  // API server mode: join before any pod starts, as upstream bootstraps first.
  let node: (() => Node | undefined) | undefined;
  let cluster: Omit<JoinedCluster, "agent"> | undefined;
  // The kubelet is created after joining: mirror pods read its pods through this.
  const late: {
    kubelet?: Pick<Kubelet, "podConfig" | "workers">;
    shutdown?: NodeShutdownManager;
  } = {};
  let joinedAgent: JoinedCluster["agent"] | undefined;
  // the eviction manager starts with the kubelet; node status and admission read it late
  const eviction: LateEviction = {};
  if (ctx.flags.kubeconfig || ctx.flags.bootstrapKubeconfig) {
    try {
      const { joinCluster } = await import("./join_cluster.ts");
      const joined = await joinCluster({
        runtime,
        clock,
        logger,
        pods: {
          all: () => late.kubelet?.podConfig.pods() ?? [],
          sourcesReady: () =>
            late.kubelet?.podConfig.allSourcesReady() ?? false,
          isTerminatingByFullName: (name) =>
            late.kubelet?.workers.isTerminatingByFullName(name) ?? false,
        },
        readinessError: () => late.shutdown?.shutdownError(),
        pressure: () => eviction.manager?.conditions() ?? [],
        ...(devices ? { devicePlugins: () => devices.capacity() } : {}),
      }, {
        ...ctx,
        nodeName,
        signal: ctx.signal,
      });
      cluster = joined;
      joinedAgent = joined.agent;
      node = () => joined.agent.reporter.node;
    } catch (cause) {
      logger.error("Cannot join the cluster", {
        err: errorMessage(cause),
      });
      await devices?.stop();
      await runtime.close();
      return 1;
    }
  }
  const environment = await readPodEnvironmentOptions(config, {
    logger,
    nodeName,
    clock,
    // a simulated runtime's pods have no cgroups: the host's are left alone
    manageCgroups: !endpoint.trim().toLowerCase().startsWith("sim://"),
    ...(ctx.flags.rootDir ? { rootDir: ctx.flags.rootDir } : {}),
    ...(cluster ? { events: cluster.events } : {}),
  });
  // upstream makes the root dir a shared mount before any volume is set up (setupDataDirs)
  if (
    ctx.flags.rootDir &&
    !(await shareRootDir(environment.rootShare, { logger }, {
      rootDir: ctx.flags.rootDir,
    }))
  ) {
    await cluster?.stop();
    await devices?.stop();
    await runtime.close();
    return 1;
  }
  // upstream sets up kubepods and the QoS tiers when its container manager starts
  await environment.podCgroups?.start().catch((cause) =>
    logger.warn("Failed to create the QoS cgroups", {
      err: errorMessage(cause),
    })
  );
  const syncFrequencyMs = durationMs(
    config.syncFrequency,
    "syncFrequency",
    60_000,
  );
  const statusManager = createPodStatusManager();
  const probeResults = createProbeResults();
  // the pods' ConfigMaps and Secrets, read with the node's identity
  const podTokens = cluster &&
    createTokenManager({
      api: cluster.objects,
      clock,
      logger: logger.with({ component: "tokens" }),
    });
  const podObjects = cluster &&
    createPodObjectManager({
      api: cluster.objects,
      clock,
      logger: logger.with({ component: "objects" }),
    }, {
      strategy: objectStrategy(
        config.configMapAndSecretChangeDetectionStrategy,
      ),
    });
  // CSI drivers registering in <root-dir>/plugins_registry, and their volumes; loaded only when
  // joined (a standalone kubelet has no CSI volumes): its generated gRPC schema alone is about
  // 0.5 MB of module text kept in the heap (docs/performance.md)
  const csiNode = cluster &&
    await (await import("../csi/mod.ts")).startCsiNode({
      logger,
      api: cluster.storage,
      nodeUid: () => joinedAgent?.reporter.nodeUid,
      ...(podObjects ? { objects: podObjects } : {}),
    }, {
      rootDir: ctx.flags.rootDir || "/var/lib/kubelet",
      nodeName,
    });
  // the cluster's Services for service env vars (upstream's service informer)
  const services = cluster &&
    createServiceCache({ api: cluster.services, clock, logger });
  const serviceSync = services?.run(ctx.signal);
  const containerLogs = createContainerLogs({ runtime, clock, logger }, config);
  // in-place resize's allocations, in upstream's checkpoint files under the root dir
  const allocations = ctx.flags.rootDir
    ? createAllocationManager({
      files: dirCheckpointFiles(ctx.flags.rootDir),
      clock,
      logger: logger.with({ component: "allocation" }),
    })
    : undefined;
  await allocations?.load();
  // the pods' user namespaces: upstream's manager takes back the pod directories' ranges at
  // start, and a range that does not fit stops the kubelet as upstream's does
  let userNamespaces: UserNamespaceManager;
  try {
    const usernsGate = (ctx.featureGates ?? createFeatureGates()).enabled(
      "UserNamespacesSupport",
    );
    // the kubelet user's subordinate IDs, when the node gives it some
    const ids = await kubeletIdRange(SYSTEM_ID_RANGE_HOST, usernsGate).catch(
      (cause) => {
        throw new Error(
          `create user namespace manager: kubelet mappings: ${
            errorMessage(cause)
          }`,
          { cause },
        );
      },
    );
    if (ids.warning) logger.warn(ids.warning, { component: "userns" });
    userNamespaces = await createUserNamespaceManager({
      files: podDirFiles(ctx.flags.rootDir || "/var/lib/kubelet"),
      handlers: statusHandlerSource(
        (signal) =>
          runtime.status({ verbose: false }, signal ? { signal } : {}),
        clock,
      ),
      logger: logger.with({ component: "userns" }),
    }, {
      gateEnabled: usernsGate,
      ...(config.userNamespaces?.idsPerPod !== undefined
        ? { idsPerPod: config.userNamespaces.idsPerPod }
        : {}),
      maxPods: config.maxPods ?? 110,
      range: ids.range,
    });
  } catch (cause) {
    logger.error("Cannot start the kubelet", { err: errorMessage(cause) });
    await runtime.close();
    return 1;
  }
  // each pod's runtime status as the PLEG last left it (upstream's pod cache)
  const runtimeCache = new RuntimeStatusCache();
  const syncer = createPodSyncer({
    runtime,
    images: runtime,
    runtimeCache,
    ...(allocations ? { allocations } : {}),
    clock,
    logger,
    nodeLogins,
    statusManager,
    userNamespaces,
    logLinks: containerLogs.links,
    probes: probeResults,
    ...(podObjects && podTokens
      ? { objects: podObjects, tokens: podTokens }
      : {}),
    ...(services ? { services } : {}),
    ...(devices ? { devices } : {}),
    ...(cluster
      ? {
        events: cluster.events,
        runtimeHandlers: apiRuntimeHandlers(cluster.runtimeClasses),
        claims: cluster.storage,
        ...(csiNode ? { csi: csiNode.volumes } : {}),
      }
      : {}),
  }, {
    podLogsDir: config.podLogsDir ?? "/var/log/pods",
    ...(ctx.flags.rootDir ? { rootDir: ctx.flags.rootDir } : {}),
    memoryVolumeDir,
    serializeImagePulls: config.serializeImagePulls ?? true,
    nodeName,
    // the pods' hostIP: the node's InternalIPs, as its status reports them
    ...(cluster
      ? {
        hostIPs: resolveNodeIPs(ctx.flags.nodeIP, Deno.networkInterfaces()).ips,
      }
      : {}),
    runtimeRequestTimeoutMs: timeoutMs,
    environment,
    ...(config.maxParallelImagePulls !== undefined
      ? { maxParallelImagePulls: config.maxParallelImagePulls }
      : {}),
  });
  const volumeTmpfs = environment.volumeTmpfs;
  const subPathBinds = environment.subPathBinds;
  const containerGc = createContainerGc({
    runtime,
    logLinks: containerLogs.links,
    ...(ctx.flags.rootDir && (volumeTmpfs || csiNode || subPathBinds)
      ? {
        releaseVolumes: releasePodVolumes(
          volumeTmpfs &&
            createMemoryVolumes({ logger }, {
              rootDir: ctx.flags.rootDir,
              access: volumeTmpfs,
              sizeFor: () => 0,
            }).release,
          csiNode?.volumes,
          subPathBinds && "binds" in subPathBinds
            ? subPathBinds.binds
            : undefined,
        ),
      }
      : {}),
    clock,
    logger: logger.with({ component: "container-gc" }),
  }, {
    podLogsDir: config.podLogsDir ?? "/var/log/pods",
    ...(ctx.flags.rootDir ? { rootDir: ctx.flags.rootDir } : {}),
    memoryVolumeDir,
    policy: {
      minAgeMs: durationMs(
        ctx.flags.minimumContainerTTLDuration,
        "minimumContainerTTLDuration",
        0,
      ),
      maxPerPodContainer: ctx.flags.maxPerPodContainerCount ?? 1,
      maxContainers: ctx.flags.maxContainerCount ?? -1,
    },
  });
  const imagePolicy: ImageGcPolicy = {
    highThresholdPercent: config.imageGCHighThresholdPercent ?? 85,
    lowThresholdPercent: config.imageGCLowThresholdPercent ?? 80,
    minAgeMs: durationMs(
      config.imageMinimumGCAge,
      "imageMinimumGCAge",
      120_000,
    ),
    maxAgeMs: durationMs(config.imageMaximumGCAge, "imageMaximumGCAge", 0),
  };
  const nodeRef = nodeReference(nodeName);
  const warnNode = cluster
    ? (reason: string, message: string) =>
      cluster?.events.event(nodeRef, "Warning", reason, message)
    : undefined;
  const imageGc = imageGcEnabled(imagePolicy)
    ? createImageGc({
      runtime,
      imageFsStats: () => imageFsStats(runtime, environment.hostFiles),
      clock,
      logger: logger.with({ component: "image-gc" }),
      ...(warnNode ? { warn: warnNode } : {}),
    }, {
      policy: imagePolicy,
      ...(ctx.flags.podInfraContainerImage
        ? { sandboxImage: ctx.flags.podInfraContainerImage }
        : {}),
    })
    : undefined;
  const kubelet = createKubelet({
    runtime,
    syncer,
    runtimeCache,
    clock,
    logger,
    probes: {
      runtime,
      statuses: statusManager,
      results: probeResults,
      ...(cluster ? { events: cluster.events } : {}),
    },
    listRunningPods: () => listRunningPods(runtime),
    ...(environment.podCgroups ? { podCgroups: environment.podCgroups } : {}),
    userNamespaces,
    containerGc,
    ...(imageGc
      ? { imageGc: { gc: imageGc, ...(warnNode ? { warn: warnNode } : {}) } }
      : {}),
    statuses: statusManager,
    ...(allocations ? { allocations } : {}),
    ...(devices
      ? { pluginResources: (pod: Pod) => devices.pluginResources(pod) }
      : {}),
    // upstream checks AppArmor after the node predicates; here it comes before them
    // upstream runs the eviction manager's admit handler first
    admission: withPressureAdmission(
      withShutdownAdmission(
        late,
        withDeviceAdmission(
          withUnsupportedFieldRefusal(withAppArmorAdmission(
            sysctlAdmission(
              createSysctlAllowlist(config.allowedUnsafeSysctls ?? [], {
                kernelRelease: kernelRelease(),
              }),
              statusManager,
            ),
            appArmorHostError(environment.appArmorEnabled ?? ""),
          )),
          () => devices,
          // upstream GetActivePods: every known pod (admitted or still waiting, as after a
          // restart) that is neither terminal nor terminating
          () =>
            late.kubelet?.podConfig.pods().filter((p) => {
              const uid = p.metadata.uid ?? "";
              const worker = late.kubelet?.workers.phaseOf(uid);
              if (worker !== undefined && worker !== "syncing") return false;
              const phase = statusManager.getPodStatus(uid)?.phase;
              return phase !== "Failed" && phase !== "Succeeded";
            }) ?? [],
        ),
      ),
      () => eviction.manager?.conditions() ?? [],
    ),
    ...(cluster
      ? {
        cluster: {
          pods: cluster.pods,
          statuses: statusManager,
          ...(cluster.mirrors ? mirrorHooks(cluster.mirrors) : {}),
          ...(node ? { node } : {}),
          ...(podObjects
            ? {
              onPodUpdate: podUpdateRegistrar(podObjects, {
                onRemoved: (pod) =>
                  podTokens?.deletePodTokens(pod.metadata.uid ?? ""),
              }),
            }
            : {}),
        },
      }
      : {}),
  }, {
    nodeName,
    ...(config.staticPodPath ? { staticPodPath: config.staticPodPath } : {}),
    ...(config.staticPodURL ? { staticPodURL: config.staticPodURL } : {}),
    staticPodURLHeader: config.staticPodURLHeader ?? {},
    fileCheckFrequencyMs: durationMs(
      config.fileCheckFrequency,
      "fileCheckFrequency",
      20_000,
    ),
    httpCheckFrequencyMs: durationMs(
      config.httpCheckFrequency,
      "httpCheckFrequency",
      20_000,
    ),
    syncFrequencyMs,
    runtimeRequestTimeoutMs: timeoutMs,
  });
  late.kubelet = kubelet;
  statusManager.onChange((change) => {
    if (change.kind !== "set") return;
    const status = change.entry.status;
    logger.info("Pod status", {
      pod: change.entry.podFullName,
      phase: status.phase,
      containers: (status.containerStatuses ?? []).map((c) =>
        `${c.name}=${Object.keys(c.state)[0] ?? "unknown"}/${c.restartCount}`
      ),
      ready: (status.containerStatuses ?? []).filter((c) => c.ready).map((c) =>
        c.name
      ),
    });
  });
  kubelet.start();
  const shutdown = nodeShutdownManager(config, {
    clock,
    logger,
    syncer,
    workers: kubelet.workers,
    pods: () => kubelet.podConfig.pods(),
    ...(joinedAgent
      ? {
        syncNodeStatus: () =>
          void joinedAgent?.reporter.updateStatus(ctx.signal).catch(() => {}),
      }
      : {}),
    ...(cluster
      ? {
        recordEvent: (message: string) =>
          cluster?.events.event(nodeRef, "Normal", "NodeShutdown", message),
      }
      : {}),
    gates: ctx.featureGates ?? createFeatureGates(),
    rootDir: ctx.flags.rootDir || "/var/lib/kubelet",
  });
  if (shutdown) late.shutdown = shutdown;
  // upstream logs a failed start and runs on without graceful shutdown
  await shutdown?.start().catch((cause) =>
    logger.error("Failed to start node shutdown manager", {
      err: errorMessage(cause),
    })
  );
  const evictionLoop = startEviction({
    runtime,
    clock,
    logger,
    kubelet,
    syncer,
    containerGc,
    ...(imageGc ? { imageGc } : {}),
    ...(environment.hostFiles ? { host: environment.hostFiles } : {}),
    ...(cluster ? { events: cluster.events } : {}),
    ...(warnNode ? { warnNode } : {}),
  }, {
    config,
    rootDir: ctx.flags.rootDir || "/var/lib/kubelet",
    late: eviction,
    signal: ctx.signal,
  });
  const logRotation = containerLogs.run(ctx.signal);
  const healthz = runHealthzServer({
    clock,
    logger: logger.with({ component: "healthz" }),
    syncLoop: kubelet.syncLoop,
    resyncIntervalMs: syncFrequencyMs,
  }, { ...healthzListenAddress(config), signal: ctx.signal });
  const kubeletApi = runKubeletApi({
    clock,
    logger,
    kubelet,
    statuses: statusManager,
    runtime,
    ...(environment.hostFiles ? { hostFiles: environment.hostFiles } : {}),
    ...(cluster
      ? {
        cluster: {
          csr: cluster.csr,
          addresses: () => node?.()?.status?.addresses,
        },
      }
      : {}),
  }, { ...ctx, nodeName, resyncIntervalMs: syncFrequencyMs });
  if (!ctx.signal.aborted) {
    await new Promise<void>((resolve) =>
      ctx.signal.addEventListener("abort", () => resolve(), { once: true })
    );
  }
  logger.info("Shutting down the kubelet");
  await healthz;
  await kubeletApi;
  await csiNode?.stop();
  podObjects?.close();
  await serviceSync;
  await cluster?.stop();
  await shutdown?.stop();
  await evictionLoop;
  await kubelet.stop();
  await devices?.stop();
  await logRotation;
  await runtime.close();
  return 0;
}

/**
 * What goes before container GC removes a gone pod's directory: its subPath pins (a recursive
 * remove through one would delete the volume's files), its tmpfs volumes, and its CSI volumes
 * unpublished (read back from their `vol_data.json`; a failure keeps the directory).
 */
function releasePodVolumes(
  memory: ((uid: string) => Promise<void>) | undefined,
  csi: Pick<CsiVolumeHost, "tearDownPod"> | undefined,
  subPaths: Pick<SubPathBinds, "cleanSubPaths"> | undefined,
): (uid: string) => Promise<void> {
  return async (uid) => {
    await subPaths?.cleanSubPaths(uid);
    await memory?.(uid);
    const pod = { metadata: { uid }, spec: { containers: [] } } as Pod;
    if (csi && !(await csi.tearDownPod(pod))) {
      throw new Error(`a CSI volume of pod ${uid} could not be unpublished`);
    }
  };
}

/** Upstream's shutdown admit handler, read late: the manager is built after the kubelet. */
function withShutdownAdmission(
  late: { shutdown?: Pick<NodeShutdownManager, "admit"> },
  base: PodAdmission,
): PodAdmission {
  return {
    admit(pod) {
      const first = base.admit(pod);
      return first.admit ? late.shutdown?.admit(pod) ?? first : first;
    },
    reject: (pod, refusal) => base.reject(pod, refusal),
  };
}
