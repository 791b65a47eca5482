/**
 * Builds the CRI `PodSandboxConfig` and `ContainerConfig` for a pod, following the kubelet's
 * conventions (kuberuntime's labels.go, `generatePodSandboxConfig`, `generateContainerConfig`):
 * labels/annotations, log layout, `$(VAR)` expansion, env with fieldRef, port mappings and the
 * Linux part (security contexts, resources).
 *
 * Everything here is pure; bad references in a spec surface as {@linkcode ContainerConfigError}
 * (reported by the syncer as `CreateContainerConfigError`).
 *
 * @module
 */

import type { MessageInitShape } from "../../runtime/mod.ts";
import type {
  ContainerConfigSchema,
  MountSchema,
  PodSandboxConfigSchema,
  PortMappingSchema,
} from "../../runtime/mod.ts";
import { containerHashString } from "./container_hash.ts";
import type { Container, Pod } from "../types.ts";
import { dnsConfigForPod, type DnsOptions } from "./dns_config.ts";
import { sandboxHostname } from "./pod_hostname.ts";
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_NAME_LABEL,
  CONTAINER_PORTS_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  POD_DELETION_GRACE_ANNOTATION,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_TERMINATION_GRACE_ANNOTATION,
  POD_UID_LABEL,
  PRESTOP_HANDLER_ANNOTATION,
  TERMINATION_MESSAGE_PATH_ANNOTATION,
  TERMINATION_MESSAGE_POLICY_ANNOTATION,
} from "../runtime_labels.ts";
import {
  type EnvContext,
  expandVars,
  makeEnvironment,
} from "../env/container_env.ts";
import {
  type ImageUser,
  linuxContainerConfig,
  linuxSandboxConfig,
} from "./linux_config.ts";
import {
  type PodCgroupOptions,
  podCgroupParent,
} from "../cgroups/pod_cgroups.ts";
import type { NodeResources } from "../cgroups/pod_resources.ts";
import type { CriDevice } from "../../volume/mod.ts";
import type { UserNamespaceInit } from "../../userns/mod.ts";

/** Plain-object init shape of CRI `PodSandboxConfig`. */
export type PodSandboxConfigInit = MessageInitShape<
  typeof PodSandboxConfigSchema
>;
/** Plain-object init shape of CRI `ContainerConfig`. */
export type ContainerConfigInit = MessageInitShape<
  typeof ContainerConfigSchema
>;

export { ContainerConfigError } from "../env/container_env.ts";

const ETC_HOSTS = "/etc/hosts";

/** Default `terminationMessagePath` (API default). */
export const DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log";

/** Kind of container instance, recorded in `io.kubernetes.container.type`. */
export type ContainerType = "init" | "container" | "ephemeral";

function joinPath(a: string, b: string): string {
  return a.endsWith("/") ? `${a}${b}` : `${a}/${b}`;
}

/** `<podLogsDir>/<namespace>_<name>_<uid>`: the pod's log directory. */
export function podLogDirectory(podLogsDir: string, pod: Pod): string {
  const m = pod.metadata;
  return joinPath(
    podLogsDir,
    `${m.namespace ?? "default"}_${m.name ?? ""}_${m.uid ?? ""}`,
  );
}

/** `<containerName>/<restartCount>.log`: a container log path, relative to the pod log dir. */
export function containerLogPath(
  containerName: string,
  restartCount: number,
): string {
  return `${containerName}/${restartCount}.log`;
}

/** The three pod identity labels. */
export function podIdentityLabels(pod: Pod): Record<string, string> {
  return {
    [POD_NAME_LABEL]: pod.metadata.name ?? "",
    [POD_NAMESPACE_LABEL]: pod.metadata.namespace ?? "default",
    [POD_UID_LABEL]: pod.metadata.uid ?? "",
  };
}

/** Options of {@linkcode generatePodSandboxConfig}. */
export interface SandboxConfigOptions {
  podLogsDir: string;
  /** Sandbox attempt (from `computePodActions`). */
  attempt: number;
  /** DNS inputs; omitted → no DNS config is sent (the runtime default applies). */
  dns?: DnsOptions;
  /**
   * Where pod cgroups go (`cgroupRoot`, `cgroupsPerQOS`, `cgroupDriver`, each defaulting as
   * upstream); omitted → no cgroup parent is sent (the runtime's default).
   */
  cgroups?: PodCgroupOptions;
  /**
   * The pod's user namespace option (the user namespace manager's answer); absent → the
   * node's, null → none is sent.
   */
  userNamespace?: UserNamespaceInit | null;
}

/**
 * The sandbox's port mappings, as upstream's MakePortMappings per container: a port repeated
 * within one container (same name, or same family, protocol, host IP and ports when unnamed)
 * is sent once; the same port in two containers is sent twice.
 */
function portMappings(pod: Pod): MessageInitShape<typeof PortMappingSchema>[] {
  const out: MessageInitShape<typeof PortMappingSchema>[] = [];
  for (const c of pod.spec.containers) {
    const seen = new Set<string>();
    for (const p of c.ports ?? []) {
      const hostIp = p.hostIP ?? "";
      const family = hostIp === "" ? "any" : hostIp.includes(":") ? "v6" : "v4";
      const key = p.name ||
        `${family}-${p.protocol ?? "TCP"}-${hostIp}:${p.containerPort}:${
          p.hostPort ?? 0
        }`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        protocol: p.protocol === "UDP" ? 1 : p.protocol === "SCTP" ? 2 : 0,
        containerPort: p.containerPort,
        hostPort: p.hostPort ?? 0,
        hostIp,
      });
    }
  }
  return out;
}

/**
 * The pod cgroup for the sandbox, "" without cgroup options. A pod whose quantities do not
 * parse gets "" too: its containers then fail with `CreateContainerConfigError` naming the
 * quantity (upstream never gets that far: the API rejects such a pod).
 */
function sandboxCgroupParent(
  pod: Pod,
  cgroups: PodCgroupOptions | undefined,
): string {
  if (!cgroups) return "";
  try {
    return podCgroupParent(pod, cgroups);
  } catch (error) {
    if (error instanceof RangeError) return "";
    throw error;
  }
}

/**
 * Builds the CRI `PodSandboxConfig` for `pod`.
 * @throws {RangeError} when the pod asks for an FQDN host name that is too long.
 */
export function generatePodSandboxConfig(
  pod: Pod,
  options: SandboxConfigOptions,
): PodSandboxConfigInit {
  const config: PodSandboxConfigInit = {
    metadata: {
      name: pod.metadata.name ?? "",
      namespace: pod.metadata.namespace ?? "default",
      uid: pod.metadata.uid ?? "",
      attempt: options.attempt,
    },
    hostname: sandboxHostname(pod, options.dns?.clusterDomain ?? ""),
    logDirectory: podLogDirectory(options.podLogsDir, pod),
    portMappings: portMappings(pod),
    labels: { ...(pod.metadata.labels ?? {}), ...podIdentityLabels(pod) },
    annotations: { ...(pod.metadata.annotations ?? {}) },
    linux: linuxSandboxConfig(
      pod,
      sandboxCgroupParent(pod, options.cgroups),
      options.userNamespace,
    ),
  };
  if (options.dns) config.dnsConfig = dnsConfigForPod(pod, options.dns);
  return config;
}

/** Options of {@linkcode generateContainerConfig}. */
export interface ContainerConfigOptions extends EnvContext {
  /** Restart count of the new instance (also the CRI attempt and log file number). */
  restartCount: number;
  /**
   * The pod's user namespace option, the sandbox's; absent → the node's, null → none. In a
   * pod's own user namespace the mounts carry its ID mappings too.
   */
  userNamespace?: UserNamespaceInit | null;
  /** Image reference to run (what `PullImage`/`ImageStatus` returned). */
  imageRef: string;
  /** Host path of the termination-message file to bind-mount, if one was created. */
  terminationMessageHostPath?: string;
  /** An ephemeral container's target container id (its process namespace is joined). */
  targetContainerId?: string;
  /** Host path of the pod's managed hosts file (`<pod dir>/etc-hosts`), when it is mounted. */
  hostsFileHostPath?: string;
  /** Node facts for the resource mapping; default: no memory capacity, no hugepage sizes. */
  node?: NodeResources;
  /** The image's user from `ImageStatus`, for `runAsUser`. */
  imageUser?: ImageUser;
  /** The container's volume mounts, resolved by the volume manager (first, as upstream). */
  volumeMounts?: MessageInitShape<typeof MountSchema>[];
  /** `seccompDefault`: RuntimeDefault seccomp for containers that name no profile. */
  seccompDefault?: boolean;
  /** `<root-dir>/seccomp`, where Localhost seccomp profiles live. */
  seccompProfileRoot?: string;
  /** What the container's device plugins answered (envs, mounts, devices, annotations). */
  devices?: ContainerDeviceOptions;
  /** The container's raw block volumes (`volumeDevices`), from the volume manager. */
  volumeDevices?: CriDevice[];
}

/**
 * A container's share of its device plugins' `Allocate` answers (upstream's
 * `RunContainerOptions` from the device manager): envs come before the
 * container's own (which win in the runtime), mounts before the volume
 * mounts, annotations under the kubelet's own.
 */
export interface ContainerDeviceOptions {
  envs: { key: string; value: string }[];
  mounts: { containerPath: string; hostPath: string; readonly: boolean }[];
  devices: CriDevice[];
  annotations: Record<string, string>;
  /** Fully qualified CDI device names the runtime resolves. */
  cdiDevices?: { name: string }[];
}

const NO_NODE_FACTS: NodeResources = { memoryCapacity: 0, hugepageSizes: [] };

function containerAnnotations(
  pod: Pod,
  container: Container,
  options: ContainerConfigOptions,
): Record<string, string> {
  const a: Record<string, string> = {
    [CONTAINER_HASH_ANNOTATION]: containerHashString(container),
    [CONTAINER_RESTART_COUNT_ANNOTATION]: String(options.restartCount),
    [TERMINATION_MESSAGE_PATH_ANNOTATION]: container.terminationMessagePath ??
      DEFAULT_TERMINATION_MESSAGE_PATH,
    [TERMINATION_MESSAGE_POLICY_ANNOTATION]:
      container.terminationMessagePolicy ?? "File",
  };
  if (pod.metadata.deletionGracePeriodSeconds !== undefined) {
    a[POD_DELETION_GRACE_ANNOTATION] = String(
      pod.metadata.deletionGracePeriodSeconds,
    );
  }
  if (pod.spec.terminationGracePeriodSeconds !== undefined) {
    a[POD_TERMINATION_GRACE_ANNOTATION] = String(
      pod.spec.terminationGracePeriodSeconds,
    );
  }
  if (container.lifecycle?.preStop) {
    a[PRESTOP_HANDLER_ANNOTATION] = JSON.stringify(container.lifecycle.preStop);
  }
  if (container.ports && container.ports.length > 0) {
    a[CONTAINER_PORTS_ANNOTATION] = JSON.stringify(container.ports);
  }
  return a;
}

/**
 * Builds the CRI `ContainerConfig` for one container instance.
 * @throws {ContainerConfigError} when an env reference cannot be resolved.
 */
export function generateContainerConfig(
  pod: Pod,
  container: Container,
  options: ContainerConfigOptions,
): ContainerConfigInit {
  const env = [
    ...(options.devices?.envs ?? []),
    ...makeEnvironment(pod, container, options),
  ];
  const lookup = new Map(env.map((e) => [e.key, e.value]));
  const mounts: MessageInitShape<typeof MountSchema>[] = [
    ...(options.devices?.mounts ?? []),
    ...(options.volumeMounts ?? []),
  ];
  // upstream makeMounts: volume mounts, then /etc/hosts unless a volume is mounted there
  if (
    options.hostsFileHostPath &&
    !(container.volumeMounts ?? []).some((m) => m.mountPath === ETC_HOSTS)
  ) {
    mounts.push({
      containerPath: ETC_HOSTS,
      hostPath: options.hostsFileHostPath,
    });
  }
  if (options.terminationMessageHostPath) {
    mounts.push({
      containerPath: container.terminationMessagePath ??
        DEFAULT_TERMINATION_MESSAGE_PATH,
      hostPath: options.terminationMessageHostPath,
    });
  }
  // upstream applyPlatformSpecificContainerConfig: in a pod's own user namespace every mount
  // is ID-mapped with the pod's mappings, so files owned by root on the host are root's inside
  const userns = options.userNamespace;
  if (userns?.uids?.length) {
    for (const m of mounts) {
      m.uidMappings = userns.uids;
      m.gidMappings = userns.gids ?? [];
    }
  }
  return {
    metadata: { name: container.name, attempt: options.restartCount },
    image: {
      image: options.imageRef,
      userSpecifiedImage: container.image ?? "",
    },
    command: (container.command ?? []).map((s) => expandVars(s, lookup)),
    args: (container.args ?? []).map((s) => expandVars(s, lookup)),
    workingDir: container.workingDir ?? "",
    envs: env,
    mounts,
    labels: {
      ...podIdentityLabels(pod),
      [CONTAINER_NAME_LABEL]: container.name,
    },
    annotations: {
      ...options.devices?.annotations,
      ...containerAnnotations(pod, container, options),
    },
    // upstream appends the block volumes to the device plugins' devices
    ...(options.devices?.devices.length || options.volumeDevices?.length
      ? {
        devices: [
          ...(options.devices?.devices ?? []),
          ...(options.volumeDevices ?? []),
        ],
      }
      : {}),
    ...(options.devices?.cdiDevices?.length
      ? { CDIDevices: options.devices.cdiDevices }
      : {}),
    logPath: containerLogPath(container.name, options.restartCount),
    stdin: container.stdin ?? false,
    stdinOnce: container.stdinOnce ?? false,
    tty: container.tty ?? false,
    linux: linuxContainerConfig(pod, container, {
      node: options.node ?? NO_NODE_FACTS,
      ...(options.imageUser ? { imageUser: options.imageUser } : {}),
      ...(options.seccompDefault ? { seccompDefault: true } : {}),
      ...(options.seccompProfileRoot
        ? { seccompProfileRoot: options.seccompProfileRoot }
        : {}),
      ...(options.targetContainerId
        ? { targetContainerId: options.targetContainerId }
        : {}),
      ...(options.userNamespace !== undefined
        ? { userNamespace: options.userNamespace }
        : {}),
    }),
  };
}
