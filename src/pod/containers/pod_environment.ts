/**
 * What the node adds to the CRI configs the pod syncer sends, beyond the pod spec: the pod
 * cgroup settings, DNS from the node's resolv.conf (read for each sandbox, as upstream
 * `GetPodDNS` does), machine facts for resources (memory capacity, hugepage sizes), the
 * managed `/etc/hosts` file and the image's user from `ImageStatus`. The syncer asks it for
 * the extra options of `generatePodSandboxConfig` and `generateContainerConfig`.
 *
 * @module
 */

import type { Logger } from "../../log/mod.ts";
import type { NodeAllocatable } from "../../volume/mod.ts";
import type { ImageService } from "../../runtime/mod.ts";
import type { ContainerConfigOptions } from "./container_config.ts";
import {
  type DnsConfigShape,
  type DnsOptions,
  parseResolvConf,
} from "./dns_config.ts";
import {
  denoHostsFileIo,
  ensureHostsFile,
  type HostsFileIo,
} from "./hosts_file.ts";
import type { ImageUser } from "./linux_config.ts";
import type { Clock } from "../../clock/mod.ts";
import {
  type CgroupAgentClient,
  cgroupAgentSocket,
  denoCgroupTreeFs,
  detectSwapController,
  localBlockExecutor,
  openCgroupAgentClient,
  type RootShareAccess,
  rootShareExecutor,
  subPathBindExecutor,
  volumeTmpfsExecutor,
} from "../../cgroup_agent/mod.ts";
import type { SubPathAccess, TmpfsAccess } from "../../volume/mod.ts";
import type { LocalBlockAccess } from "../../storage/mod.ts";
import {
  openPodCgroupManager,
  type PodCgroupManager,
} from "../cgroups/pod_cgroup_manager.ts";
import {
  type HostFiles,
  hostFilesOnHost,
  hostFilesThrough,
} from "./host_files.ts";
import type { PodCgroupOptions } from "../cgroups/pod_cgroups.ts";
import type { CgroupSettings } from "../cgroups/cgroup_settings.ts";
import type { PodEventRecorder } from "../pod_events.ts";
import {
  hugepageSizeFromDirName,
  type NodeResources,
} from "../cgroups/pod_resources.ts";
import type { Pod, SyncResult } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Kubelet settings the environment follows (from the KubeletConfiguration). */
export interface PodEnvironmentOptions {
  cgroups?: PodCgroupOptions;
  clusterDNS?: string[];
  clusterDomain?: string;
  /** `resolvConf`: the node's resolv.conf; "" → host DNS means the local resolver. */
  resolvConf?: string;
  /** Node addresses (for `resolvConf` ""). */
  nodeIPs?: string[];
  /** Machine facts; see {@linkcode readNodeResources}. */
  node?: NodeResources;
  /**
   * Kubelet root dir: the managed hosts file goes under `<rootDir>/pods/<uid>/`, Localhost
   * seccomp profiles are read from `<rootDir>/seccomp/`.
   */
  rootDir?: string;
  /** `seccompDefault`: RuntimeDefault seccomp for containers that name no profile. */
  seccompDefault?: boolean;
  /** Node allocatable for `resourceFieldRef` env values of unset limits. */
  allocatable?: NodeAllocatable;
  /**
   * The kubelet's cgroups (kubepods, QoS tiers, pod cgroups); omitted → the runtime makes the
   * pod cgroups without pod-level settings and nobody removes them.
   */
  podCgroups?: PodCgroupManager;
  /**
   * Who mounts the tmpfs of secret, projected and downwardAPI volumes (the kubelet itself
   * with every permission, else the cgroup agent), or why nobody can; omitted → on disk,
   * silently (a simulated runtime).
   */
  volumeTmpfs?: TmpfsAccess;
  /** Who pins subPaths with bind mounts (as `volumeTmpfs`), or why nobody can. */
  subPathBinds?: SubPathAccess;
  /** Who mounts and maps local PVs' block devices (as `volumeTmpfs`), or why nobody can. */
  localBlock?: LocalBlockAccess;
  /** Who makes the root dir a shared mount at start (as `volumeTmpfs`), or why nobody can. */
  rootShare?: RootShareAccess;
  /**
   * The kernel's AppArmor switch ({@linkcode APPARMOR_ENABLED_FILE}) as read once at start,
   * or why it could not be read; see {@linkcode readAppArmorEnabled}.
   */
  appArmorEnabled?: string | Error;
  /**
   * The one reader of host files under /proc and /sys and of filesystem figures (node usage
   * metrics, eviction signals, image GC): directly with every permission, else through the
   * cgroup agent; omitted → neither can read them.
   */
  hostFiles?: HostFiles;
}

/** Dependencies of {@linkcode createPodEnvironment}. */
export interface PodEnvironmentDeps {
  images: Pick<ImageService, "imageStatus">;
  logger: Logger;
  /** Reads resolv.conf (default `Deno.readTextFile`). */
  readTextFile?: (path: string) => Promise<string>;
  /** Hosts file access (default: the host file system). */
  hostsIo?: HostsFileIo;
}

/** The extra config options for one pod's sandbox and containers. */
export interface PodEnvironment {
  /**
   * Options for `generatePodSandboxConfig`; rejects when resolv.conf cannot be read. Given the
   * pod, first creates its cgroup with its settings when missing (`podCgroups`); a failure
   * there is logged and runc creates the directories instead.
   */
  sandboxOptions(
    pod?: Pod,
  ): Promise<{ dns: DnsOptions; cgroups: PodCgroupOptions }>;
  /**
   * Options for `generateContainerConfig`: node facts, the image's user and the hosts file
   * (written here). Rejects when the image status or the hosts file fails.
   */
  containerOptions(
    pod: Pod,
    context: { imageRef: string; podIPs: string[]; signal: AbortSignal },
  ): Promise<Partial<ContainerConfigOptions>>;
  /**
   * Removes the terminated pod's cgroup (`podCgroups`); never rejects: a failure is logged
   * (the first kind of failure once, then at verbosity 4).
   */
  removePodCgroup(pod: Pod): Promise<void>;
  /**
   * In-place resize: writes settings of the allocated pod to its cgroup (`podCgroups`);
   * without a cgroup manager nothing is written. Rejects when a write fails.
   */
  resizePodCgroup(pod: Pod, settings: CgroupSettings): Promise<void>;
  /** Node facts the containers' Linux resources are computed with. */
  readonly node: NodeResources;
}

const NO_NODE_FACTS: NodeResources = { memoryCapacity: 0, hugepageSizes: [] };

/** Builds the {@linkcode PodEnvironment} for a kubelet configuration. */
export function createPodEnvironment(
  deps: PodEnvironmentDeps,
  options: PodEnvironmentOptions,
): PodEnvironment {
  const readTextFile = deps.readTextFile ?? Deno.readTextFile;
  const hostsIo = deps.hostsIo ?? denoHostsFileIo;
  const resolvConf = options.resolvConf ?? "/etc/resolv.conf";
  const podCgroups = options.podCgroups;
  const warned = new Set<string>();
  return {
    async sandboxOptions(pod) {
      const cgroups = options.cgroups ?? {};
      if (pod && podCgroups) {
        try {
          await podCgroups.ensurePod(pod);
        } catch (error) {
          deps.logger.warn("Failed to create the pod cgroup", {
            pod: pod.metadata.name,
            err: errorMessage(error),
          });
        }
      }
      let host: DnsConfigShape | undefined;
      if (resolvConf !== "") {
        host = parseResolvConf(await readTextFile(resolvConf));
      }
      const dns: DnsOptions = {
        clusterDNS: options.clusterDNS ?? [],
        clusterDomain: options.clusterDomain ?? "",
        nodeIPs: options.nodeIPs ?? [],
        ...(host ? { host } : {}),
      };
      return { dns, cgroups };
    },
    async containerOptions(pod, context) {
      const out: Partial<ContainerConfigOptions> = {
        ...(options.seccompDefault ? { seccompDefault: true } : {}),
        ...(options.allocatable ? { allocatable: options.allocatable } : {}),
        ...(options.rootDir
          ? { seccompProfileRoot: `${options.rootDir}/seccomp` }
          : {}),
        node: options.node ?? NO_NODE_FACTS,
        imageUser: await imageUser(
          deps.images,
          context.imageRef,
          context.signal,
        ),
      };
      if (options.rootDir) {
        const path = await ensureHostsFile(hostsIo, pod, {
          rootDir: options.rootDir,
          podIPs: context.podIPs,
          clusterDomain: options.clusterDomain ?? "",
        });
        if (path) out.hostsFileHostPath = path;
      }
      return out;
    },
    node: options.node ?? NO_NODE_FACTS,
    async resizePodCgroup(pod, settings) {
      await podCgroups?.resizePod(pod, settings);
    },
    async removePodCgroup(pod) {
      if (!podCgroups) return;
      try {
        await podCgroups.removePod(pod);
      } catch (error) {
        const kind = error instanceof Error ? error.name : "Error";
        const fields = {
          pod: pod.metadata.name,
          err: errorMessage(error),
        };
        if (!warned.has(kind)) {
          warned.add(kind);
          deps.logger.warn("Failed to remove the pod cgroup", fields);
        } else deps.logger.v(4).info("Failed to remove the pod cgroup", fields);
      }
    },
  };
}

/** The user an image runs as (upstream `getImageUser`): uid, else name, else uid 0. */
async function imageUser(
  images: Pick<ImageService, "imageStatus">,
  imageRef: string,
  signal: AbortSignal,
): Promise<ImageUser> {
  const res = await images.imageStatus({ image: { image: imageRef } }, {
    signal,
  });
  const image = res.image;
  if (image?.uid) return { uid: image.uid.value };
  if (image?.username) return { username: image.username };
  return { uid: 0n };
}

/**
 * True when the process holds every permission, the only way Deno opens files under /sys and
 * /proc (granting a path there is not enough).
 */
export function hasEveryPermission(): boolean {
  const names = ["read", "write", "net", "env", "sys", "run", "ffi"] as const;
  return names.every((name) =>
    Deno.permissions.querySync({ name }).state === "granted"
  );
}

/**
 * Machine facts from the host: memory capacity from `Deno.systemMemoryInfo`, the hugepage
 * sizes listed in /sys/kernel/mm/hugepages (in directory order, as upstream reads them) and
 * the swap controller. Deno opens files under /sys and /proc only with every permission;
 * under the planned permission lists the cgroup agent (`agent`) reads them, and without it
 * they are not looked for: no hugepage limits and no swap settings are sent, and a warning
 * says so once and names the agent.
 */
export async function readNodeResources(
  logger: Logger,
  options: {
    hostAccess?: boolean;
    agent?: CgroupAgentClient;
    noAgent?: string;
    /**
     * False: say nothing about a missing /sys (a simulated runtime runs no
     * containers, so nothing is lost).
     */
    warnWithoutHost?: boolean;
    /** `singleProcessOOMKill`: unless true, containers on cgroup v2 get `memory.oom.group`. */
    singleProcessOOMKill?: boolean;
  } = {},
): Promise<NodeResources> {
  let memoryCapacity = 0;
  try {
    memoryCapacity = Deno.systemMemoryInfo().total;
  } catch {
    logger.warn(
      "Cannot read the machine's memory capacity: Burstable containers get the highest OOM score",
    );
  }
  const agent = options.agent;
  if (!(options.hostAccess ?? hasEveryPermission()) && !agent) {
    if (options.warnWithoutHost === false) {
      return { memoryCapacity, hugepageSizes: [] };
    }
    logger.warn(
      "Without every permission the kubelet cannot use /sys: containers get no hugepage limits and no swap settings, pod cgroups get no pod-level limits and stay after their pods; run the cgroup agent (src/cgroup_agent/main.ts, docs/permissions.md) to give the kubelet these",
      options.noAgent ? { agent: options.noAgent } : {},
    );
    return { memoryCapacity, hugepageSizes: [] };
  }
  const fs = agent?.fs ?? denoCgroupTreeFs;
  const hugepageSizes: string[] = [];
  try {
    for (const name of await fs.readDirNames("/sys/kernel/mm/hugepages")) {
      const size = hugepageSizeFromDirName(name);
      if (size) hugepageSizes.push(size);
    }
  } catch (error) {
    logger.warn(
      "Cannot list the node's hugepage sizes: containers get no hugepage limits",
      { err: errorMessage(error) },
    );
  }
  const swapController = agent
    ? await agent.swapController().catch(() => undefined)
    : await detectSwapController();
  // upstream decides by the host's cgroup version (v1: one process per OOM, always)
  const cgroupV2 = await fs.exists("/sys/fs/cgroup/cgroup.controllers")
    .catch(() => false);
  return {
    memoryCapacity,
    hugepageSizes,
    ...(swapController ? { swapController } : {}),
    ...(cgroupV2 && options.singleProcessOOMKill !== true
      ? { memoryOomGroup: true }
      : {}),
  };
}

/**
 * The result of a sandbox config that could not be built (resolv.conf unreadable), with
 * upstream's reasons: `CreatePodSandboxError` when the sandbox was to be created,
 * `ConfigPodSandboxError` when only containers were to start.
 */
export function sandboxConfigFailure(
  pod: Pod,
  error: unknown,
  creating: boolean,
): SyncResult {
  const m = pod.metadata;
  const detail = errorMessage(error);
  const who = `"${m.name}_${m.namespace}(${m.uid})"`;
  return creating
    ? {
      action: "CreatePodSandbox",
      target: m.name ?? "",
      reason: "CreatePodSandboxError",
      message: `Failed to generate sandbox config for pod ${who}: ${detail}`,
    }
    : {
      action: "ConfigPodSandbox",
      target: m.name ?? "",
      reason: "ConfigPodSandboxError",
      message: `GeneratePodSandboxConfig for pod ${who} failed: ${detail}`,
    };
}

/** The KubeletConfiguration fields {@linkcode readPodEnvironmentOptions} reads. */
export interface PodEnvironmentConfig {
  cgroupRoot?: string | undefined;
  cgroupsPerQOS?: boolean | undefined;
  cgroupDriver?: string | undefined;
  resolvConf?: string | undefined;
  clusterDNS?: string[] | undefined;
  clusterDomain?: string | undefined;
  seccompDefault?: boolean | undefined;
  enforceNodeAllocatable?: string[] | undefined;
  kubeReserved?: Record<string, string> | undefined;
  systemReserved?: Record<string, string> | undefined;
  kubeReservedCgroup?: string | undefined;
  systemReservedCgroup?: string | undefined;
  podPidsLimit?: number | undefined;
  singleProcessOOMKill?: boolean | undefined;
}

/**
 * The environment options for a configuration, with the machine facts read once from the
 * host ({@linkcode readNodeResources}).
 */
export async function readPodEnvironmentOptions(
  config: PodEnvironmentConfig,
  options: {
    logger: Logger;
    rootDir?: string;
    /** For the kubelet's cgroups: the node's name and events (`NodeAllocatableEnforced`). */
    nodeName?: string;
    /** False: no cgroup manager, the host's cgroups untouched (a simulated runtime). */
    manageCgroups?: boolean;
    events?: PodEventRecorder;
    clock?: Pick<Clock, "now">;
  },
): Promise<PodEnvironmentOptions> {
  const hostAccess = hasEveryPermission();
  const cgroups: PodCgroupOptions = {};
  if (config.cgroupRoot !== undefined) cgroups.cgroupRoot = config.cgroupRoot;
  if (config.cgroupsPerQOS !== undefined) {
    cgroups.cgroupsPerQOS = config.cgroupsPerQOS;
  }
  if (config.cgroupDriver !== undefined) {
    cgroups.cgroupDriver = config.cgroupDriver;
  }
  const manage = options.manageCgroups !== false;
  // the sandboxed kubelet reaches /sys through the cgroup agent when one listens
  let agent: CgroupAgentClient | undefined;
  let noAgent: string | undefined;
  if (!hostAccess && manage && options.rootDir) {
    const opened = await openCgroupAgentClient(
      cgroupAgentSocket(options.rootDir),
    );
    if ("client" in opened) agent = opened.client;
    else noAgent = opened.reason;
  }
  const node = await readNodeResources(options.logger, {
    hostAccess,
    warnWithoutHost: manage,
    ...(config.singleProcessOOMKill !== undefined
      ? { singleProcessOOMKill: config.singleProcessOOMKill }
      : {}),
    ...(agent ? { agent } : {}),
    ...(noAgent ? { noAgent } : {}),
  });
  if (agent) {
    options.logger.info("Managing cgroups through the cgroup agent", {
      socket: cgroupAgentSocket(options.rootDir ?? ""),
    });
  }
  const appArmorEnabled = await readAppArmorEnabled(
    hostAccess
      ? (path) => Deno.readTextFile(path)
      : agent
      ? (path) => agent.fs.readTextFile(path)
      : {
        unavailable:
          `the kubelet lacks permissions and no cgroup agent answers (${
            noAgent ?? "no root dir"
          })`,
      },
  );
  const volumeTmpfs: TmpfsAccess | undefined = !manage || !options.rootDir
    ? undefined
    : hostAccess
    ? { tmpfs: volumeTmpfsExecutor(options.rootDir) }
    : agent
    ? { tmpfs: agent }
    : { reason: noAgent ?? "no cgroup agent" };
  const subPathBinds: SubPathAccess | undefined = !manage || !options.rootDir
    ? undefined
    : hostAccess
    ? { binds: subPathBindExecutor(options.rootDir) }
    : agent
    ? { binds: agent }
    : { reason: noAgent ?? "no cgroup agent" };
  const localBlock: LocalBlockAccess | undefined = !manage || !options.rootDir
    ? undefined
    : hostAccess
    ? { devices: localBlockExecutor(options.rootDir) }
    : agent
    ? { devices: agent }
    : { reason: noAgent ?? "no cgroup agent" };
  const rootShare: RootShareAccess | undefined = !manage || !options.rootDir
    ? undefined
    : hostAccess
    ? { sharer: rootShareExecutor(options.rootDir) }
    : agent
    ? { sharer: agent }
    : { reason: noAgent ?? "no cgroup agent" };
  const podCgroups = await openPodCgroupManager({
    logger: options.logger,
    clock: options.clock ?? { now: () => Date.now() },
    ...(options.events ? { events: options.events } : {}),
    ...(agent ? { fs: agent.fs, kill: agent.kill } : {}),
    // the systemd driver's slices go through the agent too: the lists grant no system bus
    ...(agent && config.cgroupDriver === "systemd"
      ? { slices: agent.slices }
      : {}),
  }, {
    nodeName: options.nodeName ?? "",
    cgroups,
    ...(options.rootDir ? { rootDir: options.rootDir } : {}),
    memoryBytes: node.memoryCapacity,
    hostAccess: (hostAccess || agent !== undefined) && manage,
    hugepageSizes: node.hugepageSizes,
    allocatable: {
      ...(config.enforceNodeAllocatable
        ? { enforce: config.enforceNodeAllocatable }
        : {}),
      ...(config.kubeReserved ? { kubeReserved: config.kubeReserved } : {}),
      ...(config.systemReserved
        ? { systemReserved: config.systemReserved }
        : {}),
      ...(config.kubeReservedCgroup
        ? { kubeReservedCgroup: config.kubeReservedCgroup }
        : {}),
      ...(config.systemReservedCgroup
        ? { systemReservedCgroup: config.systemReservedCgroup }
        : {}),
    },
    ...(config.podPidsLimit !== undefined
      ? { podPidsLimit: config.podPidsLimit }
      : {}),
  });
  return {
    cgroups,
    ...(volumeTmpfs ? { volumeTmpfs } : {}),
    ...(subPathBinds ? { subPathBinds } : {}),
    ...(localBlock ? { localBlock } : {}),
    ...(rootShare ? { rootShare } : {}),
    // capacity stands in for allocatable: reservations are not subtracted here
    allocatable: {
      cpuMillis: navigator.hardwareConcurrency * 1000,
      memoryBytes: node.memoryCapacity,
    },
    resolvConf: config.resolvConf ?? "/etc/resolv.conf",
    clusterDNS: config.clusterDNS ?? [],
    clusterDomain: config.clusterDomain ?? "",
    node,
    ...(podCgroups ? { podCgroups } : {}),
    ...(config.seccompDefault ? { seccompDefault: true } : {}),
    ...(options.rootDir ? { rootDir: options.rootDir } : {}),
    appArmorEnabled,
    ...(hostAccess
      ? { hostFiles: hostFilesOnHost }
      : agent
      ? { hostFiles: hostFilesThrough(agent) }
      : {}),
  };
}

/** The kernel's AppArmor switch: "Y" when AppArmor is enabled. */
export const APPARMOR_ENABLED_FILE = "/sys/module/apparmor/parameters/enabled";

/**
 * The text of the kernel's AppArmor switch, or why it could not be read: directly with every
 * permission, else through the cgroup agent. Missing means a kernel without the AppArmor
 * module, as upstream reads it.
 */
export async function readAppArmorEnabled(
  read: ((path: string) => Promise<string>) | { unavailable: string },
): Promise<string | Error> {
  if ("unavailable" in read) return new Error(read.unavailable);
  try {
    return await read(APPARMOR_ENABLED_FILE);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "";
    return error instanceof Error ? error : new Error(String(error));
  }
}
