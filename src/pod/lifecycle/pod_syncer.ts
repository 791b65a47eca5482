/**
 * The pod lifecycle entry points (kubelet's `SyncPod`/`SyncTerminatingPod`/
 * `SyncTerminatedPod`): read the runtime's view of the pod, store the computed status, plan
 * with `computePodActions` and carry the plan out with `executePodActions`, remembering each
 * step's result for the status. Per-container failures are {@linkcode SyncResult} values with
 * upstream reasons; only infrastructure failures (runtime unreachable, abort) reject.
 *
 * @module
 */

import { podStartDuration } from "../../metrics/mod.ts";
import { CONFIG_SEEN_ANNOTATION } from "../static/static_pod.ts";
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { ImageService, RuntimeService } from "../../runtime/mod.ts";
import type { PodStatusManager } from "../../status/mod.ts";
import {
  type Backoff,
  containerBackoffKey,
  createContainerBackoff,
} from "../containers/backoff.ts";
import {
  activeDeadlineRemainingMs,
  DEADLINE_EXCEEDED_MESSAGE,
  DEADLINE_EXCEEDED_REASON,
} from "../status/active_deadline.ts";
import { computePodStatus } from "../status/compute_pod_status.ts";
import { rfc3339 } from "../status/pod_conditions.ts";
import { podLogDirectory } from "../containers/container_config.ts";
import { type ExecuteDeps, executePodActions } from "./execute_pod_actions.ts";
import { createInitContainerCleaner } from "./init_container_cleanup.ts";
import type { DnsOptions } from "../containers/dns_config.ts";
import {
  createImagePuller,
  type NodeLoginSource,
} from "../images/image_puller.ts";
import { type PodEventRecorder, podReference } from "../pod_events.ts";
import {
  createMemoryVolumes,
  createVolumeManager,
  memoryVolumeSize,
  type VolumeManager,
} from "../../volume/mod.ts";
import { podCgroupConfig } from "../cgroups/pod_resources.ts";
import { pullSecretsFor } from "../images/pull_credentials.ts";
import type { ObjectGetter, TokenSource } from "../../objects/mod.ts";
import type { ServiceLister } from "../env/service_env.ts";
import { withObjectVolumes } from "../containers/object_volumes.ts";
import {
  type ClaimReader,
  type CsiVolumeHost,
  withStorageVolumes,
} from "../../storage/mod.ts";
import {
  createPodEnvironment,
  type PodEnvironment,
  type PodEnvironmentOptions,
} from "../containers/pod_environment.ts";
import { computePodActions, findContainerView } from "./pod_actions.ts";
import type { AllocationManager } from "../resize/allocation_manager.ts";
import { planIsEmpty, planResize } from "../resize/resize_plan.ts";
import { addResizeRestarts, executeResize } from "./execute_resize.ts";
import type { PodActions } from "./pod_plan.ts";
import type { CgroupSettings } from "../cgroups/cgroup_settings.ts";
import type { ProbeResult } from "../probes/probe_results.ts";
import { type KillDeps, killPod } from "./pod_kill.ts";
import { getPodRuntimeStatus } from "../status/runtime_pod_status.ts";
import type { RuntimeStatusCache } from "../status/runtime_status_cache.ts";
import { terminatePodStatus } from "../status/terminate_pod_status.ts";
import {
  type KubeletTermination,
  phaseAtKill,
  terminatedByKubeletStatus,
} from "../status/kubelet_termination.ts";
import {
  EVICTED_REASON,
  evictedStatus,
  EVICTION_MONITORING_PERIOD_MS,
  localStorageEvictionMessage,
  type LocalStorageUsage,
  needsLocalStorageCheck,
  podEphemeralLimit,
} from "../gc/local_storage_eviction.ts";
import { directorySize } from "../../util/directory_size.ts";
import { ContainerState } from "../../runtime/mod.ts";
import {
  denoTerminationMessageWriter,
  type TerminationMessageReader,
  type TerminationMessageWriter,
} from "../containers/termination_message.ts";
import {
  denoReadDirNames,
  type StartContainerDeps,
} from "./start_container.ts";
import {
  type RuntimeHandlerResolver,
  STANDALONE_RUNTIME_HANDLERS,
} from "./runtime_class.ts";
import type { UserNamespaceManager } from "../../userns/mod.ts";
import type {
  Container,
  Pod,
  PodRuntimeStatus,
  PodStatus,
  PodSyncer,
  PodSyncOutcome,
  PodWork,
  SyncResult,
} from "../types.ts";

/** Dependencies of {@linkcode createPodSyncer}. */
export interface PodSyncerDeps {
  runtime: RuntimeService;
  images: ImageService;
  clock: Clock;
  logger: Logger;
  statusManager: PodStatusManager;
  /** Probe results by container id (the prober's `ProbeResults`); absent → no probing. */
  probes?: {
    liveness?: ReadonlyMap<string, ProbeResult>;
    startup?: ReadonlyMap<string, ProbeResult>;
    readiness?: ReadonlyMap<string, boolean>;
  };
  /** Creates a directory with parents (default: `Deno.mkdir(path, { recursive: true, mode: 0o755 })`). */
  mkdir?: (path: string) => Promise<void>;
  /** Lists a directory's file names (default: `Deno.readDir`; missing → empty). */
  readDirNames?: (path: string) => Promise<string[]>;
  /** Reads termination-message files and log tails (default: the host file system). */
  messageReader?: TerminationMessageReader;
  /** Creates/removes termination-message files (default: the host file system). */
  messageWriter?: TerminationMessageWriter;
  /** `/var/log/containers` links made after each container start; omitted → none. */
  logLinks?: StartContainerDeps["logLinks"];
  /**
   * The pods' ConfigMaps and Secrets (env, `imagePullSecrets`); absent: standalone, where env
   * references to them fail as upstream's do without a kubeClient.
   */
  objects?: ObjectGetter;
  /** The node's own registry logins (docker config files, credential plugins). */
  nodeLogins?: NodeLoginSource;
  /**
   * Service account tokens for projected volumes; with `objects`, configMap, secret and
   * projected volumes are written from the API server's objects.
   */
  tokens?: TokenSource;
  /** The cluster's Services for service env vars; absent (standalone) → none. */
  services?: ServiceLister;
  /**
   * The pods' PersistentVolumeClaims and PersistentVolumes; with it, claim and ephemeral
   * volumes are set up (absent: standalone, where they fail to mount).
   */
  claims?: ClaimReader;
  /** The CSI node side, for CSI volumes (with `claims`); absent → CSI volumes are refused. */
  csi?: CsiVolumeHost;
  /** Pod and container lifecycle events; omitted → none. */
  events?: PodEventRecorder;
  /** The device manager (plugins' `Allocate` before a container is created); omitted → none. */
  devices?: StartContainerDeps["devices"];
  /**
   * The handlers of the pods' RuntimeClasses; absent (standalone): only the default class
   * runs, a named one is refused.
   */
  runtimeHandlers?: RuntimeHandlerResolver;
  /**
   * The pods' user namespaces (ranges for `hostUsers: false`, freed when a pod terminates);
   * omitted → `hostUsers: false` is refused as on a runtime without support.
   */
  userNamespaces?: UserNamespaceManager;
  /**
   * In-place resize: the pods handed to the syncer are the pods as allocated; running
   * containers are brought to their allocation and the resize conditions reported.
   * Omitted → no resize is applied.
   */
  allocations?: AllocationManager;
  /**
   * The runtime status of each pod as last read, voided by the PLEG's events for the pod; a
   * sync works from it when it is there (upstream's pod cache). Omitted → every sync reads the
   * runtime.
   */
  runtimeCache?: RuntimeStatusCache;
}

/** Options of {@linkcode createPodSyncer}. */
export interface PodSyncerOptions {
  /** Root of pod log directories (`podLogsDir`, default `/var/log/pods`). */
  podLogsDir: string;
  /**
   * Kubelet root dir (`--root-dir`, default `/var/lib/kubelet`) for termination-message files;
   * omitted → containers get no termination-message mount.
   */
  rootDir?: string;
  serializeImagePulls: boolean;
  maxParallelImagePulls?: number;
  nodeName: string;
  /** Node addresses reported as hostIP(s) (and as pod IPs for host-network pods). */
  hostIPs?: string[];
  /** CRI deadline added to stop timeouts (`runtimeRequestTimeout`, default 2m). */
  runtimeRequestTimeoutMs?: number;
  /**
   * Runtime name for container IDs in the status (`<name>://<id>`); default: the `runtimeName`
   * the runtime reports from `Version`, else `containerd`.
   */
  runtimeName?: string;
  /** DNS inputs for sandboxes; omitted → none sent (`environment` supersedes it). */
  dns?: DnsOptions;
  /**
   * Node settings for the configs: cgroups, DNS from resolv.conf, machine facts, hosts file,
   * image user; omitted → default pod cgroups and none of the rest.
   */
  environment?: PodEnvironmentOptions;
  /**
   * tmpfs directory for `medium: Memory` emptyDirs (default `/run/kubelet.ts/memory`); volumes
   * are set up only with a `rootDir`.
   */
  memoryVolumeDir?: string;
  /**
   * How often a pod with a size-limited emptyDir is measured for eviction (default 10 s,
   * upstream's eviction monitoring period).
   */
  evictionMonitoringPeriodMs?: number;
}

/** A {@linkcode PodSyncer} with read access to what it last did (for status and tests). */
export interface RuntimePodSyncer extends PodSyncer {
  /** Results of the last `syncPod` of the pod (empty when unknown). */
  lastSyncResults(uid: string): readonly SyncResult[];
  /**
   * Records that the kubelet is about to stop the pod for `termination` (node shutdown): every
   * status from now until the pod is terminated carries it (upstream's status function of
   * `killPodNow`). The caller then asks the pod workers to kill the pod.
   */
  markKubeletTermination(uid: string, termination: KubeletTermination): void;
  /**
   * Records a node-pressure eviction of the pod (upstream `killPodFunc`'s status function):
   * its statuses from now on are Evicted with `message`, and its containers are stopped with
   * `gracePeriodSeconds`. The caller then hands the pod workers a kill.
   */
  recordEviction(
    uid: string,
    eviction: { message: string; gracePeriodSeconds: number },
  ): void;
}

const DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS = 120_000;

function uidOf(pod: Pod): string {
  return pod.metadata.uid ?? "";
}

function identity(pod: Pod) {
  return {
    uid: uidOf(pod),
    name: pod.metadata.name ?? "",
    namespace: pod.metadata.namespace ?? "default",
  };
}

function isTerminalPhase(status: PodStatus | undefined): boolean {
  return status?.phase === "Succeeded" || status?.phase === "Failed";
}

function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata.annotations?.["kubernetes.io/config.source"];
  return source !== undefined && source !== "api";
}

/** Startup results as "has the container started" (only a success counts). */
function startedView(
  startup: ReadonlyMap<string, ProbeResult>,
): ReadonlyMap<string, boolean> {
  const started = new Map<string, boolean>();
  for (const [id, result] of startup) started.set(id, result === "success");
  return started;
}

class KubePodSyncer implements RuntimePodSyncer {
  #deps: PodSyncerDeps;
  #options: PodSyncerOptions;
  #kill: KillDeps;
  #backoff: Backoff;
  #execDeps: ExecuteDeps;
  /** Last StartContainer failure per pod uid and container name (kubelet's reason cache). */
  #reasons = new Map<string, Map<string, SyncResult>>();
  /** Evicted pods (local storage or node pressure): message and stop grace period, by UID. */
  #evictions = new Map<
    string,
    { message: string; gracePeriodSeconds: number }
  >();
  /** Pods the kubelet stops for another reason (node shutdown), by UID. */
  #terminations = new Map<string, KubeletTermination>();
  #lastResults = new Map<string, SyncResult[]>();
  #runtimeName: string | undefined;
  #environment: PodEnvironment | undefined;
  #volumes: VolumeManager | undefined;

  constructor(deps: PodSyncerDeps, options: PodSyncerOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#runtimeName = options.runtimeName;
    this.#kill = {
      runtime: deps.runtime,
      logger: deps.logger,
      clock: deps.clock,
      runtimeRequestTimeoutMs: options.runtimeRequestTimeoutMs ??
        DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS,
      ...(deps.events ? { events: deps.events } : {}),
    };
    this.#backoff = createContainerBackoff({ clock: deps.clock });
    const objects = deps.objects;
    const puller = createImagePuller(
      {
        images: deps.images,
        clock: deps.clock,
        logger: deps.logger,
        ...(deps.events ? { events: deps.events } : {}),
        ...(deps.nodeLogins ? { nodeLogins: deps.nodeLogins } : {}),
        ...(objects
          ? {
            pullSecrets: (pod: Pod, signal?: AbortSignal) =>
              pullSecretsFor({ objects, logger: deps.logger }, pod, signal),
          }
          : {}),
      },
      {
        serializeImagePulls: options.serializeImagePulls,
        ...(options.maxParallelImagePulls !== undefined
          ? { maxParallelImagePulls: options.maxParallelImagePulls }
          : {}),
      },
    );
    const mkdir = deps.mkdir ??
      ((path: string) => Deno.mkdir(path, { recursive: true, mode: 0o755 }));
    const messageWriter = deps.messageWriter ?? denoTerminationMessageWriter;
    this.#environment = options.environment &&
      createPodEnvironment(
        { images: deps.images, logger: deps.logger },
        options.environment,
      );
    const tmpfsAccess = options.environment?.volumeTmpfs;
    const nodeMemory = options.environment?.allocatable?.memoryBytes;
    const memoryVolumes = options.rootDir && tmpfsAccess
      ? createMemoryVolumes({ logger: deps.logger }, {
        rootDir: options.rootDir,
        access: tmpfsAccess,
        sizeFor: (pod) =>
          memoryVolumeSize(nodeMemory, podCgroupConfig(pod).memoryLimit),
      })
      : undefined;
    const volumes = options.rootDir
      ? createVolumeManager({
        logger: deps.logger,
        ...(memoryVolumes ? { memoryVolumes } : {}),
        ...(options.environment?.subPathBinds
          ? { subPaths: options.environment.subPathBinds }
          : {}),
      }, {
        rootDir: options.rootDir,
        ...(options.environment?.allocatable
          ? { node: options.environment.allocatable }
          : {}),
        ...(options.memoryVolumeDir
          ? { memoryDir: options.memoryVolumeDir }
          : {}),
      })
      : undefined;
    const storage = volumes && deps.claims
      ? withStorageVolumes(volumes, {
        claims: deps.claims,
        logger: deps.logger,
        ...(deps.csi ? { csi: deps.csi } : {}),
        ...(options.rootDir ? { rootDir: options.rootDir } : {}),
        ...(options.environment?.localBlock
          ? { localBlock: options.environment.localBlock }
          : {}),
      })
      : volumes;
    this.#volumes = storage && objects && deps.tokens && options.rootDir
      ? withObjectVolumes(storage, {
        objects,
        tokens: deps.tokens,
        ...(memoryVolumes ? { memoryVolumes } : {}),
      }, {
        rootDir: options.rootDir,
      })
      : storage;
    const start: StartContainerDeps = {
      kill: this.#kill,
      ...(deps.logLinks ? { logLinks: deps.logLinks } : {}),
      runtime: deps.runtime,
      logger: deps.logger,
      backoff: this.#backoff,
      puller,
      mkdir,
      readDirNames: deps.readDirNames ?? denoReadDirNames,
      podLogsDir: options.podLogsDir,
      ...(options.rootDir ? { rootDir: options.rootDir } : {}),
      messageWriter,
      nodeName: options.nodeName,
      hostIPs: options.hostIPs ?? [],
      ...(this.#environment ? { environment: this.#environment } : {}),
      ...(this.#volumes ? { volumes: this.#volumes } : {}),
      ...(objects ? { objects } : {}),
      ...(deps.services ? { services: deps.services } : {}),
      ...(deps.events ? { events: deps.events } : {}),
      ...(deps.devices ? { devices: deps.devices } : {}),
    };
    this.#execDeps = {
      runtime: deps.runtime,
      logger: deps.logger,
      kill: this.#kill,
      start,
      initContainers: createInitContainerCleaner({
        runtime: deps.runtime,
        logger: deps.logger,
        messageWriter,
        ...(options.rootDir ? { rootDir: options.rootDir } : {}),
      }),
      mkdir,
      podLogsDir: options.podLogsDir,
      runtimeHandlers: deps.runtimeHandlers ?? STANDALONE_RUNTIME_HANDLERS,
      ...(deps.userNamespaces ? { userNamespaces: deps.userNamespaces } : {}),
      ...(deps.events ? { events: deps.events } : {}),
      ...(options.dns ? { dns: options.dns } : {}),
      ...(this.#environment ? { environment: this.#environment } : {}),
    };
  }

  lastSyncResults(uid: string): readonly SyncResult[] {
    return this.#lastResults.get(uid) ?? [];
  }

  markKubeletTermination(uid: string, termination: KubeletTermination): void {
    this.#terminations.set(uid, termination);
  }

  /**
   * Upstream `CheckPodResizeInProgress` before the status: sets or clears the in-progress
   * condition (a completed resize gets its `ResizeCompleted` event); terminal pods carry none.
   */
  #resizeStatus(pod: Pod, runtime: PodRuntimeStatus, podIsTerminal: boolean) {
    const allocations = this.#deps.allocations;
    if (!allocations) return undefined;
    const uid = uidOf(pod);
    if (podIsTerminal) allocations.clearConditions(uid);
    else {
      const running = (name: string) =>
        findContainerView(runtime, name)?.state === "running";
      if (allocations.checkInProgress(pod, running)) {
        this.#deps.events?.event(
          podReference(pod),
          "Normal",
          "ResizeCompleted",
          resizeCompletedMessage(pod),
        );
      }
    }
    return {
      conditions: allocations.conditions(uid),
      actuated: (name: string) => allocations.actuated(uid, name),
    };
  }

  recordEviction(
    uid: string,
    eviction: { message: string; gracePeriodSeconds: number },
  ): void {
    if (!this.#evictions.has(uid)) this.#evictions.set(uid, { ...eviction });
  }

  #computeStatus(
    pod: Pod,
    runtime: PodRuntimeStatus,
    podIsTerminal: boolean,
  ): PodStatus {
    const uid = uidOf(pod);
    const previous = this.#deps.statusManager.getPodStatus(uid);
    const resize = this.#resizeStatus(pod, runtime, podIsTerminal);
    const status = computePodStatus(pod, runtime, {
      ...(resize ? { resize } : {}),
      clock: this.#deps.clock,
      syncResults: [...(this.#reasons.get(uid)?.values() ?? [])],
      ...(previous ? { previous } : {}),
      podIsTerminal,
      isStatic: isStaticPod(pod),
      hostIPs: this.#options.hostIPs ?? [],
      runtimeName: this.#runtimeName ?? "containerd",
      ...(this.#deps.probes?.readiness
        ? { readiness: this.#deps.probes.readiness }
        : {}),
      ...(this.#deps.probes?.startup
        ? { started: startedView(this.#deps.probes.startup) }
        : {}),
    });
    const evicted = this.#evictions.get(uid)?.message;
    // upstream's eviction status function; a pod that already succeeded stays so
    if (evicted !== undefined && previous?.phase !== "Succeeded") {
      return evictedStatus(
        status,
        evicted,
        previous,
        rfc3339(this.#deps.clock.now()),
      );
    }
    let termination = this.#terminations.get(uid);
    if (termination && !termination.phaseAtKill) {
      termination = {
        ...termination,
        phaseAtKill: phaseAtKill(status, termination),
      };
      this.#terminations.set(uid, termination);
    }
    return termination
      ? terminatedByKubeletStatus(
        status,
        termination,
        previous,
        rfc3339(this.#deps.clock.now()),
      )
      : status;
  }

  /**
   * Upstream `localStorageEviction`: measures the pod's limited local storage and records an
   * eviction for the first limit exceeded (kept until the pod is terminated).
   */
  async #checkLocalStorage(
    pod: Pod,
    logger: Logger,
    signal: AbortSignal,
  ): Promise<void> {
    const uid = uidOf(pod);
    if (this.#evictions.has(uid) || !needsLocalStorageCheck(pod)) return;
    const usage: LocalStorageUsage = {
      emptyDirs: await this.#volumes?.emptyDirUsage?.(pod) ?? [],
      containers: podEphemeralLimit(pod)
        ? await this.#containerStorage(pod, signal)
        : new Map(),
    };
    const message = localStorageEvictionMessage(pod, usage);
    if (message === undefined) return;
    logger.info("Evicting pod: local storage over its limit", { message });
    // upstream kills a pod over its local storage limit at once (0: the runtime minimum)
    this.#evictions.set(uid, { message, gracePeriodSeconds: 0 });
  }

  /**
   * Per running container: its writable layer (CRI stats) plus its log files, as upstream's
   * summary counts a container's rootfs and logs.
   */
  async #containerStorage(
    pod: Pod,
    signal: AbortSignal,
  ): Promise<Map<string, number>> {
    const uid = uidOf(pod);
    const { containers } = await this.#deps.runtime.listContainers({
      filter: {
        state: { state: ContainerState.CONTAINER_RUNNING },
        labelSelector: { "io.kubernetes.pod.uid": uid },
      },
    }, { signal });
    const logs = podLogDirectory(this.#options.podLogsDir, pod);
    const out = new Map<string, number>();
    for (const c of containers) {
      const name = c.metadata?.name ?? "";
      const { stats } = await this.#deps.runtime.containerStats({
        containerId: c.id,
      }, { signal }).catch(() => ({ stats: undefined }));
      const layer = Number(stats?.writableLayer?.usedBytes?.value ?? 0n);
      const logged = await directorySize(`${logs}/${name}`).catch(() => 0);
      out.set(name, (out.get(name) ?? 0) + layer + logged);
    }
    return out;
  }

  /**
   * The pod's sandboxes and containers: the kept status when `cached` and nothing of the pod
   * changed since it was read, else read from the runtime (and kept).
   */
  async #readRuntime(
    pod: Pod,
    signal: AbortSignal,
    cached = false,
  ): Promise<PodRuntimeStatus> {
    const cache = this.#deps.runtimeCache;
    const uid = uidOf(pod);
    const kept = cached ? cache?.get(uid) : undefined;
    if (kept) return kept;
    const read = cache?.begin(uid);
    let status: PodRuntimeStatus;
    try {
      status = await getPodRuntimeStatus(
        this.#deps.runtime,
        identity(pod),
        {
          signal,
          ...(this.#deps.messageReader
            ? { messageReader: this.#deps.messageReader }
            : {}),
        },
      );
    } catch (error) {
      if (read) cache?.abandon(read);
      throw error;
    }
    if (read) cache?.store(read, status);
    if (this.#runtimeName === undefined) {
      try {
        const version = await this.#deps.runtime.version({}, { signal });
        this.#runtimeName = version.runtimeName || undefined;
      } catch {
        // keep the default; asked again on the next sync
      }
    }
    return status;
  }

  /** Publishes a status computed by `syncPod`, timing the pod's first move to Running. */
  #setSyncedStatus(pod: Pod, status: PodStatus): void {
    const previous = this.#deps.statusManager.getPodStatus(uidOf(pod));
    if (status.phase === "Running" && previous?.phase !== "Running") {
      observePodStart(pod, this.#deps.clock.now());
    }
    if (
      status.reason === EVICTED_REASON && previous?.reason !== EVICTED_REASON
    ) {
      this.#deps.events?.event(
        podReference(pod),
        "Warning",
        EVICTED_REASON,
        status.message ?? "",
      );
    }
    if (
      status.reason === DEADLINE_EXCEEDED_REASON &&
      previous?.reason !== DEADLINE_EXCEEDED_REASON
    ) {
      this.#deps.events?.event(
        podReference(pod),
        "Normal",
        DEADLINE_EXCEEDED_REASON,
        DEADLINE_EXCEEDED_MESSAGE,
      );
    }
    this.#deps.statusManager.setPodStatus(pod, status);
  }

  async syncPod(work: PodWork, signal: AbortSignal): Promise<PodSyncOutcome> {
    try {
      return await this.#syncPod(work, signal);
    } catch (error) {
      // a sync cut short may have changed the runtime after its last read
      this.#deps.runtimeCache?.invalidate(uidOf(work.pod));
      throw error;
    }
  }

  async #syncPod(work: PodWork, signal: AbortSignal): Promise<PodSyncOutcome> {
    const pod = work.pod;
    const uid = uidOf(pod);
    const logger = this.#deps.logger.with({
      pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
      podUID: uid,
    });
    await this.#checkLocalStorage(pod, logger, signal);
    const before = await this.#readRuntime(pod, signal, true);
    const status = this.#computeStatus(pod, before, false);
    this.#setSyncedStatus(pod, status);
    if (isTerminalPhase(status)) return { terminal: true };

    const actions = computePodActions(pod, before, {
      ...(this.#deps.probes?.liveness
        ? { livenessResults: this.#deps.probes.liveness }
        : {}),
      ...(this.#deps.probes?.startup
        ? { startupResults: this.#deps.probes.startup }
        : {}),
    });
    const resize = await this.#resize(pod, before, actions, signal);
    const mount = await this.#volumes?.setUpPod(pod);
    if (mount && !mount.ok) {
      this.#deps.events?.event(
        podReference(pod),
        "Warning",
        mount.reason,
        mount.message,
      );
    }
    const results = mount && !mount.ok
      ? mountFailures(pod, before, mount.message)
      : await executePodActions(this.#execDeps, {
        pod,
        status: before,
        actions,
        signal,
        logger,
      });
    results.unshift(...resize.failures);
    await this.#recordActuated(pod, results);
    this.#lastResults.set(uid, results);
    this.#recordReasons(uid, results);

    let final = status;
    if (results.length > 0 || resize.applied) {
      // something changed in the runtime: report the new state right away
      const after = await this.#readRuntime(pod, signal);
      final = this.#computeStatus(pod, after, false);
      this.#setSyncedStatus(pod, final);
    }
    const outcome: PodSyncOutcome = { terminal: isTerminalPhase(final) };
    // requeued at the deadline, as upstream's sync loop checks activeDeadlineHandler
    const deadline = activeDeadlineRemainingMs(
      pod,
      final.startTime,
      this.#deps.clock.now(),
    );
    // pods with a local storage limit are measured again after the monitoring period
    const monitor = needsLocalStorageCheck(pod)
      ? this.#options.evictionMonitoringPeriodMs ??
        EVICTION_MONITORING_PERIOD_MS
      : undefined;
    const retry = [this.#retryAfter(results), deadline, monitor].filter((ms) =>
      ms !== undefined
    ).map((ms) => Math.max(0, ms!));
    if (retry.length > 0) outcome.retryAfterMs = Math.min(...retry);
    return outcome;
  }

  /**
   * In-place resize of the running containers (upstream `computePodResizeAction` and
   * `doPodResizeAction`): restarts are added to `actions`, updates are applied here.
   */
  async #resize(
    pod: Pod,
    runtime: PodRuntimeStatus,
    actions: PodActions,
    signal: AbortSignal,
  ): Promise<{ applied: boolean; failures: SyncResult[] }> {
    const none = { applied: false, failures: [] };
    const allocations = this.#deps.allocations;
    if (!allocations || actions.killPod || actions.createSandbox) return none;
    if (isStaticPod(pod)) return none;
    const uid = uidOf(pod);
    const running = [
      ...pod.spec.containers,
      ...(pod.spec.initContainers ?? []),
    ].flatMap((c) => {
      const view = findContainerView(runtime, c.name);
      return view?.state === "running" ? [{ name: c.name, id: view.id }] : [];
    });
    const plan = planResize(pod, running, (n) => allocations.actuated(uid, n));
    if (planIsEmpty(plan)) return none;
    addResizeRestarts(actions, pod, plan);
    const failed = await executeResize(
      {
        runtime: this.#deps.runtime,
        logger: this.#deps.logger,
        ...(this.#environment
          ? {
            resizePodCgroup: (p: Pod, settings: CgroupSettings) =>
              this.#environment!.resizePodCgroup(p, settings),
          }
          : {}),
        node: this.#environment?.node ??
          { memoryCapacity: 0, hugepageSizes: [] },
        actuated: (u, n) => allocations.actuated(u, n),
        setActuated: (u, n, r) => allocations.setActuated(u, n, r),
      },
      pod,
      plan,
      signal,
    );
    if (!failed) return { applied: true, failures: [] };
    allocations.resizeFailed(pod, failed.message ?? "");
    return { applied: true, failures: [failed] };
  }

  /** Upstream `SetActuatedResources` at each container start. */
  async #recordActuated(pod: Pod, results: readonly SyncResult[]) {
    const allocations = this.#deps.allocations;
    if (!allocations) return;
    for (const r of results) {
      if (r.action !== "StartContainer" || r.reason) continue;
      const c = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]
        .find((x) => x.name === r.target);
      if (c) await allocations.setActuated(uidOf(pod), c.name, c.resources);
    }
  }

  #retryAfter(results: readonly SyncResult[]): number | undefined {
    const now = this.#deps.clock.now();
    let retry: number | undefined;
    for (const r of results) {
      if (!r.reason) continue;
      const after = r.retryAt !== undefined
        ? Math.max(0, r.retryAt - now)
        : 10_000;
      retry = retry === undefined ? after : Math.min(retry, after);
    }
    return retry;
  }

  #recordReasons(uid: string, results: readonly SyncResult[]): void {
    let reasons = this.#reasons.get(uid);
    for (const r of results) {
      if (r.action !== "StartContainer") continue;
      if (r.reason) {
        if (!reasons) this.#reasons.set(uid, reasons = new Map());
        reasons.set(r.target, r);
      } else {
        reasons?.delete(r.target);
      }
    }
  }

  async syncTerminatingPod(work: PodWork, signal: AbortSignal): Promise<void> {
    const pod = work.pod;
    const before = await this.#readRuntime(pod, signal);
    this.#deps.statusManager.setPodStatus(
      pod,
      this.#computeStatus(pod, before, false),
    );
    // an evicted pod stops with the eviction's grace period, whatever the pod asks for
    const override = this.#evictions.get(uidOf(pod))?.gracePeriodSeconds ??
      work.gracePeriodSeconds;
    const results = await killPod(this.#kill, { pod, status: before }, {
      signal,
      ...(override !== undefined ? { gracePeriodOverride: override } : {}),
    });
    const failures = results.filter((r) => r.reason);
    if (failures.length > 0) {
      throw new Error(
        `Cannot stop pod "${pod.metadata.namespace}/${pod.metadata.name}": ${
          failures.map((f) => f.message).join("; ")
        }`,
      );
    }
    const after = await this.#readRuntime(pod, signal);
    const stillRunning = after.containers.filter((c) => c.state === "running");
    if (stillRunning.length > 0) {
      throw new Error(
        `Cannot stop pod "${pod.metadata.namespace}/${pod.metadata.name}": CRI violation: containers still running after stop: ${
          stillRunning.map((c) => c.name).join(", ")
        }`,
      );
    }
    this.#deps.statusManager.setPodStatus(
      pod,
      this.#computeStatus(pod, after, true),
    );
  }

  async syncTerminatingRuntimePod(
    work: PodWork,
    signal: AbortSignal,
  ): Promise<void> {
    const pod = work.pod;
    const status = await this.#readRuntime(pod, signal);
    const results = await killPod(this.#kill, { pod: undefined, status }, {
      signal,
      gracePeriodOverride: work.gracePeriodSeconds ?? 1,
    });
    // nothing of an orphan is kept: it has no worker that syncs it again
    this.#deps.runtimeCache?.invalidate(uidOf(pod));
    const failures = results.filter((r) => r.reason);
    if (failures.length > 0) {
      throw new Error(
        `Cannot stop orphaned pod "${pod.metadata.namespace}/${pod.metadata.name}": ${
          failures.map((f) => f.message).join("; ")
        }`,
      );
    }
  }

  /**
   * Upstream `SyncTerminatedPod`: the final status is recorded and in-memory state released, but
   * the exited containers, their logs and the stopped sandbox stay. Container GC removes them
   * once the pod is deleted (`ShouldPodContentBeRemoved`), so a restarted kubelet still sees a
   * finished pod as Succeeded/Failed and starts nothing.
   */
  async syncTerminatedPod(work: PodWork, signal: AbortSignal): Promise<void> {
    const pod = work.pod;
    const uid = uidOf(pod);
    const status = await this.#readRuntime(pod, signal);
    const running = status.containers.filter((c) =>
      c.state === "running" || c.state === "unknown"
    );
    if (running.length > 0 || status.sandboxes.some((s) => s.ready)) {
      // anything still running was missed by the terminating step
      await killPod(this.#kill, { pod, status }, {
        signal,
        gracePeriodOverride: 0,
      });
    }
    // upstream unmounts the volumes of a terminated pod (emptyDir data goes with them)
    await this.#volumes?.tearDownPod(pod);
    // upstream SyncTerminatedPod destroys the pod cgroup before the final status
    await this.#environment?.removePodCgroup(pod);
    // upstream SyncTerminatedPod then frees the pod's user namespace range
    await this.#deps.userNamespaces?.release(uid);
    const final = terminatePodStatus(this.#computeStatus(pod, status, true), {
      isStatic: isStaticPod(pod),
      initContainers: pod.spec.initContainers?.length ?? 0,
    });
    this.#deps.statusManager.setPodStatus(pod, final);
    for (
      const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]
    ) {
      this.#backoff.reset(containerBackoffKey(pod, c));
    }
    this.#reasons.delete(uid);
    this.#lastResults.delete(uid);
    this.#evictions.delete(uid);
    this.#deps.runtimeCache?.invalidate(uid);
    this.#terminations.delete(uid);
  }
}

/**
 * Volumes that could not be set up block every container not yet running (upstream waits for
 * the mounts before any container starts); each reports reason `FailedMount` with the message.
 */
function mountFailures(
  pod: Pod,
  status: PodRuntimeStatus,
  message: string,
): SyncResult[] {
  const running = new Set(
    status.containers.filter((c) => c.state === "running").map((c) => c.name),
  );
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers]
    .filter((c) => !running.has(c.name))
    .map((c) => ({
      action: "StartContainer",
      target: c.name,
      reason: "FailedMount",
      message,
    }));
}

/** Creates the CRI-backed {@linkcode PodSyncer}. */
/** Upstream `podResizeCompletionMsg`: the allocation of every container, as JSON. */
function resizeCompletedMessage(pod: Pod): string {
  const entry = (c: Container) => ({
    name: c.name,
    resources: c.resources ?? {},
  });
  const summary: Record<string, unknown> = {};
  if (pod.spec.initContainers?.length) {
    summary.initContainers = pod.spec.initContainers.map(entry);
  }
  summary.containers = pod.spec.containers.map(entry);
  return `Pod resize completed: ${JSON.stringify(summary)}`;
}

export function createPodSyncer(
  deps: PodSyncerDeps,
  options: PodSyncerOptions,
): RuntimePodSyncer {
  return new KubePodSyncer(deps, options);
}

const podStartSeconds = podStartDuration.labels();

/**
 * `kubelet_pod_start_duration_seconds`: from when the kubelet first saw the pod (the
 * `kubernetes.io/config.seen` stamp) to its first Running status.
 */
function observePodStart(pod: Pod, nowMs: number): void {
  const seen = Date.parse(
    pod.metadata.annotations?.[CONFIG_SEEN_ANNOTATION] ?? "",
  );
  if (Number.isFinite(seen)) podStartSeconds.observe((nowMs - seen) / 1000);
}
