/**
 * Pod and container security settings → CRI `LinuxSandboxSecurityContext` and
 * `LinuxContainerSecurityContext` (upstream kuberuntime `determineEffectiveSecurityContext`,
 * `generatePodSandboxLinuxConfig`, `getSeccompProfile`, `getAppArmorProfile` and
 * pkg/securitycontext). Pure: the image user and the kubelet settings come in as arguments.
 *
 * Merge rule: a container field set in the container wins over the pod's; the pod gives
 * runAsUser, runAsGroup, runAsNonRoot, seLinuxOptions, seccompProfile and appArmorProfile;
 * supplemental groups, fsGroup and the namespaces only come from the pod.
 *
 * @module
 */

import type { MessageInitShape } from "../../runtime/mod.ts";
import type {
  LinuxContainerSecurityContextSchema,
  LinuxSandboxSecurityContextSchema,
  NamespaceOptionSchema,
} from "../../runtime/mod.ts";
import { join } from "../../util/posix_path.ts";
import {
  NODE_USER_NAMESPACE,
  type UserNamespaceInit,
} from "../../userns/mod.ts";
import { ContainerConfigError } from "../env/container_env.ts";
import type {
  Container,
  Pod,
  SecurityContext,
  SecurityProfile,
} from "../types.ts";

type ContainerSecurityInit = MessageInitShape<
  typeof LinuxContainerSecurityContextSchema
>;
type SandboxSecurityInit = MessageInitShape<
  typeof LinuxSandboxSecurityContextSchema
>;
type NamespaceOptionInit = MessageInitShape<typeof NamespaceOptionSchema>;
type ProfileInit = { profileType: number; localhostRef?: string };

// CRI enum values (runtime.v1): NamespaceMode POD=0 CONTAINER=1 NODE=2 TARGET=3;
// SecurityProfile.ProfileType RuntimeDefault=0 Unconfined=1 Localhost=2;
// SupplementalGroupsPolicy Merge=0 Strict=1.
const NS_POD = 0;
const NS_CONTAINER = 1;
const NS_NODE = 2;
const NS_TARGET = 3;
const RUNTIME_DEFAULT = 0;
const UNCONFINED = 1;
const LOCALHOST = 2;
const GROUPS_POLICY: Record<string, number> = { Merge: 0, Strict: 1 };

/**
 * Paths masked unless `procMount: Unmasked` (upstream pkg/securitycontext defaultMaskedPaths).
 * Privileged containers get them too: the runtime drops them for privileged containers.
 */
export const DEFAULT_MASKED_PATHS: readonly string[] = [
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
/** Paths mounted read-only unless `procMount: Unmasked`. */
export const DEFAULT_READONLY_PATHS: readonly string[] = [
  "/proc/bus",
  "/proc/fs",
  "/proc/irq",
  "/proc/sys",
  "/proc/sysrq-trigger",
];

/** Deprecated string forms of AppArmor profiles, still sent beside the structured one. */
const APPARMOR_RUNTIME_DEFAULT = "runtime/default";
const APPARMOR_UNCONFINED = "unconfined";
const APPARMOR_LOCALHOST_PREFIX = "localhost/";
/** Pod annotation prefix of the pre-field AppArmor setting, still honoured upstream. */
export const APPARMOR_ANNOTATION_PREFIX =
  "container.apparmor.security.beta.kubernetes.io/";

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

/** Kubelet settings the container security context follows. */
export interface SecurityOptions {
  /** `seccompDefault`: containers without a profile get RuntimeDefault instead of Unconfined. */
  seccompDefault?: boolean;
  /** `<root-dir>/seccomp`, the directory Localhost seccomp profiles are relative to. */
  seccompProfileRoot?: string;
  /** The image's user; absent → no user is sent unless the pod names one. */
  imageUser?: ImageUser;
  /**
   * The pod's user namespace option (the user namespace manager's answer); absent → the
   * node's, null → none is sent.
   */
  userNamespace?: UserNamespaceInit | null;
  /**
   * An ephemeral container's `targetContainerName`, resolved to the CRI id of that container:
   * its process namespace is joined (mode TARGET) unless the pod shares one already.
   */
  targetContainerId?: string;
}

/**
 * Namespace modes the pod asks for (kuberuntime `NamespacesForPod`). The user namespace is
 * the user namespace manager's answer: mode NODE for a pod without `hostUsers: false` (the
 * default here), POD with the pod's ID mappings, or none (null) with the gate off.
 */
export function namespaceOptions(
  pod: Pod,
  userNamespace: UserNamespaceInit | null = NODE_USER_NAMESPACE,
): NamespaceOptionInit {
  return {
    ...(userNamespace ? { usernsOptions: userNamespace } : {}),
    network: pod.spec.hostNetwork ? NS_NODE : NS_POD,
    pid: pod.spec.hostPID
      ? NS_NODE
      : pod.spec.shareProcessNamespace
      ? NS_POD
      : NS_CONTAINER,
    ipc: pod.spec.hostIPC ? NS_NODE : NS_POD,
  };
}

/** Upstream `DetermineEffectiveSecurityContext`: the pod's settings under the container's. */
export function effectiveSecurityContext(
  pod: Pod,
  container: Container,
): SecurityContext {
  const psc = pod.spec.securityContext ?? {};
  const fromPod: SecurityContext = {};
  if (psc.runAsUser !== undefined) fromPod.runAsUser = psc.runAsUser;
  if (psc.runAsGroup !== undefined) fromPod.runAsGroup = psc.runAsGroup;
  if (psc.runAsNonRoot !== undefined) fromPod.runAsNonRoot = psc.runAsNonRoot;
  if (psc.seLinuxOptions) fromPod.seLinuxOptions = psc.seLinuxOptions;
  const own = Object.entries(container.securityContext ?? {}).filter(
    ([, value]) => value !== undefined,
  );
  return { ...fromPod, ...Object.fromEntries(own) };
}

function podRef(pod: Pod): string {
  const m = pod.metadata;
  return `${m.name}_${m.namespace}(${m.uid})`;
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
  const sc = effectiveSecurityContext(pod, container);
  if (sc.runAsNonRoot !== true) return;
  const where = `(pod: "${podRef(pod)}", container: ${container.name})`;
  if (sc.runAsUser !== undefined) {
    if (sc.runAsUser === 0) {
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

/**
 * Upstream `getSeccompProfile`: the container's profile, else the pod's, else RuntimeDefault
 * with `seccompDefault` and Unconfined without. Localhost profiles are files under
 * `<root-dir>/seccomp`.
 * @throws {ContainerConfigError} for a Localhost profile without `localhostProfile`.
 */
export function seccompProfile(
  pod: Pod,
  container: Container,
  options: SecurityOptions,
): ProfileInit {
  const index = containerIndex(pod, container);
  const own = container.securityContext?.seccompProfile;
  const chosen = own ?? pod.spec.securityContext?.seccompProfile;
  const field = own
    ? `${index}.securityContext.seccompProfile`
    : "spec.securityContext.seccompProfile";
  if (!chosen) {
    return {
      profileType: options.seccompDefault ? RUNTIME_DEFAULT : UNCONFINED,
    };
  }
  if (chosen.type === "RuntimeDefault") return { profileType: RUNTIME_DEFAULT };
  if (chosen.type === "Localhost") {
    if (!chosen.localhostProfile) {
      throw new ContainerConfigError(
        field,
        "localhostProfile must be set if seccompProfile type is Localhost.",
      );
    }
    return {
      profileType: LOCALHOST,
      localhostRef: join(
        options.seccompProfileRoot ?? "/var/lib/kubelet/seccomp",
        chosen.localhostProfile,
      ),
    };
  }
  return { profileType: UNCONFINED };
}

/** The AppArmor profile from the fields, else from the deprecated per-container annotation. */
function appArmorSource(
  pod: Pod,
  container: Container,
): SecurityProfile | undefined {
  const field = container.securityContext?.appArmorProfile ??
    pod.spec.securityContext?.appArmorProfile;
  if (field) return field;
  const value = pod.metadata.annotations
    ?.[APPARMOR_ANNOTATION_PREFIX + container.name];
  if (value === undefined) return undefined;
  if (value === APPARMOR_RUNTIME_DEFAULT) return { type: "RuntimeDefault" };
  if (value === APPARMOR_UNCONFINED) return { type: "Unconfined" };
  if (value.startsWith(APPARMOR_LOCALHOST_PREFIX)) {
    return {
      type: "Localhost",
      localhostProfile: value.slice(APPARMOR_LOCALHOST_PREFIX.length),
    };
  }
  return undefined;
}

/**
 * Upstream `getAppArmorProfile`: the structured profile and its deprecated string form, or
 * nothing (the runtime applies its default) when neither the fields nor the annotation set one.
 * @throws {ContainerConfigError} for a Localhost profile without a name.
 */
export function appArmorProfile(
  pod: Pod,
  container: Container,
): { apparmor: ProfileInit; apparmorProfile: string } | undefined {
  const chosen = appArmorSource(pod, container);
  if (!chosen) return undefined;
  switch (chosen.type) {
    case "RuntimeDefault":
      return {
        apparmor: { profileType: RUNTIME_DEFAULT },
        apparmorProfile: APPARMOR_RUNTIME_DEFAULT,
      };
    case "Unconfined":
      return {
        apparmor: { profileType: UNCONFINED },
        apparmorProfile: APPARMOR_UNCONFINED,
      };
    case "Localhost":
      if (!chosen.localhostProfile) {
        throw new ContainerConfigError(
          `${containerIndex(pod, container)}.securityContext.appArmorProfile`,
          "missing localhost apparmor profile name",
        );
      }
      return {
        apparmor: {
          profileType: LOCALHOST,
          localhostRef: chosen.localhostProfile,
        },
        apparmorProfile: APPARMOR_LOCALHOST_PREFIX + chosen.localhostProfile,
      };
  }
  throw new ContainerConfigError(
    `${containerIndex(pod, container)}.securityContext.appArmorProfile.type`,
    `unknown apparmor profile type: "${String(chosen.type)}"`,
  );
}

function containerIndex(pod: Pod, container: Container): string {
  const init = (pod.spec.initContainers ?? []).indexOf(container);
  if (init >= 0) return `spec.initContainers[${init}]`;
  const index = pod.spec.containers.indexOf(container);
  return `spec.containers[${index >= 0 ? index : 0}]`;
}

/** fsGroup first, then the supplemental groups, as upstream appends them. */
function podGroups(pod: Pod): bigint[] {
  const psc = pod.spec.securityContext ?? {};
  const groups: bigint[] = [];
  if (psc.fsGroup !== undefined) groups.push(BigInt(psc.fsGroup));
  for (const g of psc.supplementalGroups ?? []) groups.push(BigInt(g));
  return groups;
}

function groupsPolicy(pod: Pod): number | undefined {
  const policy = pod.spec.securityContext?.supplementalGroupsPolicy;
  if (policy === undefined) return undefined;
  const value = GROUPS_POLICY[policy];
  if (value === undefined) {
    throw new ContainerConfigError(
      "spec.securityContext.supplementalGroupsPolicy",
      `unsupported supplementalGroupsPolicy "${policy}"; use Merge or Strict`,
    );
  }
  return value;
}

function selinux(sc: Pick<SecurityContext, "seLinuxOptions">) {
  const o = sc.seLinuxOptions;
  if (!o) return undefined;
  return {
    user: o.user ?? "",
    role: o.role ?? "",
    type: o.type ?? "",
    level: o.level ?? "",
  };
}

/**
 * The container's CRI security context (upstream `determineEffectiveSecurityContext`).
 * @throws {RunAsNonRootError} when `runAsNonRoot` forbids the user the container would run as.
 * @throws {ContainerConfigError} for incomplete seccomp or AppArmor profiles.
 */
export function containerSecurityContext(
  pod: Pod,
  container: Container,
  options: SecurityOptions,
): ContainerSecurityInit {
  if (options.imageUser) verifyRunAsNonRoot(pod, container, options.imageUser);
  const sc = effectiveSecurityContext(pod, container);
  const unmasked = sc.procMount === "Unmasked";
  const namespaces = namespaceOptions(pod, options.userNamespace);
  if (options.targetContainerId && namespaces.pid === NS_CONTAINER) {
    namespaces.pid = NS_TARGET;
    namespaces.targetId = options.targetContainerId;
  }
  const out: ContainerSecurityInit = {
    namespaceOptions: namespaces,
    privileged: sc.privileged === true,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    // upstream AddNoNewPrivileges: only an explicit false sets no_new_privs
    noNewPrivs: sc.allowPrivilegeEscalation === false,
    supplementalGroups: podGroups(pod),
    maskedPaths: unmasked ? [] : [...DEFAULT_MASKED_PATHS],
    readonlyPaths: unmasked ? [] : [...DEFAULT_READONLY_PATHS],
    seccomp: seccompProfile(pod, container, options),
  };
  const apparmor = appArmorProfile(pod, container);
  if (apparmor) Object.assign(out, apparmor);
  if (sc.capabilities) {
    out.capabilities = {
      addCapabilities: sc.capabilities.add ?? [],
      dropCapabilities: sc.capabilities.drop ?? [],
    };
  }
  const selinuxOptions = selinux(sc);
  if (selinuxOptions) out.selinuxOptions = selinuxOptions;
  if (sc.runAsUser !== undefined) {
    out.runAsUser = { value: BigInt(sc.runAsUser) };
  } else if (options.imageUser) {
    const { uid, username } = options.imageUser;
    if (uid !== undefined) out.runAsUser = { value: uid };
    if (username) out.runAsUsername = username;
  }
  if (sc.runAsGroup !== undefined) {
    out.runAsGroup = { value: BigInt(sc.runAsGroup) };
  }
  const policy = groupsPolicy(pod);
  if (policy !== undefined) out.supplementalGroupsPolicy = policy;
  return out;
}

/**
 * The sandbox's CRI security context (upstream `generatePodSandboxLinuxConfig`): privileged
 * when any container is, the pod's user, group and groups, and always RuntimeDefault seccomp
 * so that least-privilege pod profiles stay usable.
 */
export function sandboxSecurityContext(
  pod: Pod,
  userNamespace?: UserNamespaceInit | null,
): SandboxSecurityInit {
  const psc = pod.spec.securityContext ?? {};
  // upstream HasPrivilegedContainer visits every container, ephemeral ones included
  const all = [
    ...(pod.spec.initContainers ?? []),
    ...pod.spec.containers,
    ...(pod.spec.ephemeralContainers ?? []),
  ];
  const out: SandboxSecurityInit = {
    namespaceOptions: namespaceOptions(pod, userNamespace),
    privileged: all.some((c) => c.securityContext?.privileged === true),
    supplementalGroups: podGroups(pod),
    seccomp: { profileType: RUNTIME_DEFAULT },
  };
  if (psc.runAsUser !== undefined) {
    out.runAsUser = { value: BigInt(psc.runAsUser) };
  }
  if (psc.runAsGroup !== undefined) {
    out.runAsGroup = { value: BigInt(psc.runAsGroup) };
  }
  const selinuxOptions = selinux(psc);
  if (selinuxOptions) out.selinuxOptions = selinuxOptions;
  const policy = pod.spec.securityContext?.supplementalGroupsPolicy;
  if (policy !== undefined && GROUPS_POLICY[policy] !== undefined) {
    out.supplementalGroupsPolicy = GROUPS_POLICY[policy];
  }
  return out;
}
