/**
 * Linux parts of the CRI sandbox/container configs: namespace options, a minimal security
 * context, the pod cgroup and the resources of the sandbox and each container
 * (`pod_resources.ts`).
 *
 * @module
 */

import type { MessageInitShape } from "../runtime/mod.ts";
import type {
  LinuxContainerConfigSchema,
  LinuxPodSandboxConfigSchema,
  NamespaceOptionSchema,
} from "../runtime/mod.ts";
import {
  containerLinuxResources,
  type LinuxResourcesInit,
  type NodeResources,
  overheadLinuxResources,
  sandboxLinuxResources,
} from "./pod_resources.ts";
import type { Container, Pod, SecurityProfile } from "./types.ts";

type NamespaceOptionInit = MessageInitShape<typeof NamespaceOptionSchema>;
type LinuxSandboxInit = MessageInitShape<typeof LinuxPodSandboxConfigSchema>;
type LinuxContainerInit = MessageInitShape<typeof LinuxContainerConfigSchema>;

// CRI enum values (runtime.v1): NamespaceMode POD=0 CONTAINER=1 NODE=2;
// SecurityProfile.ProfileType RuntimeDefault=0 Unconfined=1 Localhost=2.
const NS_POD = 0;
const NS_CONTAINER = 1;
const NS_NODE = 2;
const PROFILE: Record<SecurityProfile["type"], number> = {
  RuntimeDefault: 0,
  Unconfined: 1,
  Localhost: 2,
};

/**
 * Paths masked in non-privileged containers (kubelet's default procMount; upstream
 * pkg/securitycontext/util.go defaultMaskedPaths, which gained /proc/interrupts).
 */
export const DEFAULT_MASKED_PATHS = [
  "/proc/asound",
  "/proc/acpi",
  "/proc/interrupts",
  "/proc/kcore",
  "/proc/keys",
  "/proc/latency_stats",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/proc/sched_debug",
  "/proc/scsi",
  "/sys/firmware",
  "/sys/devices/virtual/powercap",
];
/** Paths mounted read-only in non-privileged containers. */
export const DEFAULT_READONLY_PATHS = [
  "/proc/bus",
  "/proc/fs",
  "/proc/irq",
  "/proc/sys",
  "/proc/sysrq-trigger",
];

/**
 * Namespace modes the pod asks for. Pods share the node's user namespace: upstream sends
 * mode NODE explicitly (kuberuntime namespacesForPod with the user namespace manager's
 * answer for a pod without `hostUsers: false`).
 */
export function namespaceOptions(pod: Pod): NamespaceOptionInit {
  return {
    usernsOptions: { mode: NS_NODE },
    network: pod.spec.hostNetwork ? NS_NODE : NS_POD,
    pid: pod.spec.hostPID
      ? NS_NODE
      : pod.spec.shareProcessNamespace
      ? NS_POD
      : NS_CONTAINER,
    ipc: pod.spec.hostIPC ? NS_NODE : NS_POD,
  };
}

function profile(
  p: SecurityProfile | undefined,
): { profileType: number; localhostRef: string } {
  if (!p) return { profileType: PROFILE.Unconfined, localhostRef: "" };
  return {
    profileType: PROFILE[p.type] ?? PROFILE.Unconfined,
    localhostRef: p.localhostProfile ?? "",
  };
}

/**
 * `compute()`, or no resources when a quantity in the pod does not parse: the sandbox still
 * starts and the container configs report the quantity (`CreateContainerConfigError`).
 */
function unlessBadQuantity(
  compute: () => LinuxResourcesInit,
): LinuxResourcesInit {
  try {
    return compute();
  } catch (error) {
    if (error instanceof RangeError) return {};
    throw error;
  }
}

/** Linux part of the sandbox config; `cgroupParent` from `podCgroupParent`. */
export function linuxSandboxConfig(
  pod: Pod,
  cgroupParent: string,
): LinuxSandboxInit {
  const psc = pod.spec.securityContext ?? {};
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  const sc: NonNullable<LinuxSandboxInit["securityContext"]> = {
    namespaceOptions: namespaceOptions(pod),
    privileged: all.some((c) => c.securityContext?.privileged === true),
    supplementalGroups: (psc.supplementalGroups ?? []).map(BigInt),
    // the pause container always runs with the runtime's default seccomp profile
    seccomp: { profileType: PROFILE.RuntimeDefault },
  };
  if (psc.runAsUser !== undefined) {
    sc.runAsUser = { value: BigInt(psc.runAsUser) };
  }
  if (psc.runAsGroup !== undefined) {
    sc.runAsGroup = { value: BigInt(psc.runAsGroup) };
  }
  return {
    cgroupParent,
    securityContext: sc,
    sysctls: Object.fromEntries(
      (psc.sysctls ?? []).map((s) => [s.name, s.value]),
    ),
    overhead: unlessBadQuantity(() => overheadLinuxResources(pod)),
    resources: unlessBadQuantity(() => sandboxLinuxResources(pod)),
  };
}

/**
 * The user an image runs as, from CRI `ImageStatus` (upstream `getImageUser`): its uid, else
 * its user name; an image that names neither runs as uid 0.
 */
export interface ImageUser {
  uid?: bigint;
  username?: string;
}

/** Thrown when a container may not run as root and would (upstream `verifyRunAsNonRoot`). */
export class RunAsNonRootError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunAsNonRootError";
  }
}

/**
 * Upstream `verifyRunAsNonRoot`: with `runAsNonRoot` (container over pod), a `runAsUser` of 0,
 * an image that runs as uid 0, or an image user given only by name (not checkable) is refused.
 * @throws {RunAsNonRootError} with upstream's message.
 */
export function verifyRunAsNonRoot(
  pod: Pod,
  container: Container,
  imageUser: ImageUser,
): void {
  const csc = container.securityContext ?? {};
  const psc = pod.spec.securityContext ?? {};
  if ((csc.runAsNonRoot ?? psc.runAsNonRoot) !== true) return;
  const m = pod.metadata;
  const where =
    `(pod: "${m.name}_${m.namespace}(${m.uid})", container: ${container.name})`;
  const runAsUser = csc.runAsUser ?? psc.runAsUser;
  if (runAsUser !== undefined) {
    if (runAsUser === 0) {
      throw new RunAsNonRootError(
        `container's runAsUser breaks non-root policy ${where}`,
      );
    }
    return;
  }
  if (imageUser.uid === 0n) {
    throw new RunAsNonRootError(
      `container has runAsNonRoot and image will run as root ${where}`,
    );
  }
  if (imageUser.uid === undefined && imageUser.username) {
    throw new RunAsNonRootError(
      `container has runAsNonRoot and image has non-numeric user (${imageUser.username}), cannot verify user is non-root ${where}`,
    );
  }
}

/** Options of {@linkcode linuxContainerConfig}. */
export interface LinuxContainerOptions {
  node: NodeResources;
  /** The image's user; absent → the runtime applies it (no runAsUser is sent). */
  imageUser?: ImageUser;
}

/**
 * Linux part of a container config.
 * @throws {RunAsNonRootError} when `runAsNonRoot` forbids the user the container would run as.
 */
export function linuxContainerConfig(
  pod: Pod,
  container: Container,
  options: LinuxContainerOptions,
): LinuxContainerInit {
  if (options.imageUser) verifyRunAsNonRoot(pod, container, options.imageUser);
  const psc = pod.spec.securityContext ?? {};
  const csc = container.securityContext ?? {};
  const privileged = csc.privileged === true;
  const sc: NonNullable<LinuxContainerInit["securityContext"]> = {
    namespaceOptions: namespaceOptions(pod),
    privileged,
    readonlyRootfs: csc.readOnlyRootFilesystem === true,
    noNewPrivs: csc.allowPrivilegeEscalation === false,
    supplementalGroups: (psc.supplementalGroups ?? []).map(BigInt),
    maskedPaths: privileged ? [] : [...DEFAULT_MASKED_PATHS],
    readonlyPaths: privileged ? [] : [...DEFAULT_READONLY_PATHS],
    seccomp: profile(csc.seccompProfile ?? psc.seccompProfile),
  };
  const runAsUser = csc.runAsUser ?? psc.runAsUser;
  const runAsGroup = csc.runAsGroup ?? psc.runAsGroup;
  if (runAsUser !== undefined) sc.runAsUser = { value: BigInt(runAsUser) };
  else if (options.imageUser) {
    // upstream determineEffectiveSecurityContext: the image's uid, else its user name
    const { uid, username } = options.imageUser;
    if (uid !== undefined) sc.runAsUser = { value: uid };
    else if (username) sc.runAsUsername = username;
  }
  if (runAsGroup !== undefined) sc.runAsGroup = { value: BigInt(runAsGroup) };
  if (csc.capabilities) {
    sc.capabilities = {
      addCapabilities: csc.capabilities.add ?? [],
      dropCapabilities: csc.capabilities.drop ?? [],
    };
  }
  return {
    resources: containerLinuxResources(pod, container, options.node),
    securityContext: sc,
  };
}
