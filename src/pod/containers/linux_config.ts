/**
 * Linux parts of the CRI sandbox/container configs: the security contexts
 * (`security_context.ts`), sysctls, the pod cgroup and the resources of the sandbox and each
 * container (`pod_resources.ts`).
 *
 * @module
 */

import type { MessageInitShape } from "../../runtime/mod.ts";
import type {
  LinuxContainerConfigSchema,
  LinuxPodSandboxConfigSchema,
} from "../../runtime/mod.ts";
import {
  containerLinuxResources,
  type LinuxResourcesInit,
  type NodeResources,
  overheadLinuxResources,
  sandboxLinuxResources,
} from "../cgroups/pod_resources.ts";
import {
  containerSecurityContext,
  sandboxSecurityContext,
  type SecurityOptions,
} from "./security_context.ts";
import type { Container, Pod } from "../types.ts";
import type { UserNamespaceInit } from "../../userns/mod.ts";

type LinuxSandboxInit = MessageInitShape<typeof LinuxPodSandboxConfigSchema>;
type LinuxContainerInit = MessageInitShape<typeof LinuxContainerConfigSchema>;

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

/**
 * Linux part of the sandbox config; `cgroupParent` from `podCgroupParent`, the user
 * namespace as {@linkcode namespaceOptions} takes it.
 */
export function linuxSandboxConfig(
  pod: Pod,
  cgroupParent: string,
  userNamespace?: UserNamespaceInit | null,
): LinuxSandboxInit {
  const psc = pod.spec.securityContext ?? {};
  return {
    cgroupParent,
    securityContext: sandboxSecurityContext(pod, userNamespace),
    sysctls: Object.fromEntries(
      (psc.sysctls ?? []).map((s) => [s.name, s.value]),
    ),
    overhead: unlessBadQuantity(() => overheadLinuxResources(pod)),
    resources: unlessBadQuantity(() => sandboxLinuxResources(pod)),
  };
}

/** Options of {@linkcode linuxContainerConfig}. */
export interface LinuxContainerOptions extends SecurityOptions {
  node: NodeResources;
}

/**
 * Linux part of a container config.
 * @throws {RunAsNonRootError} when `runAsNonRoot` forbids the user the container would run as.
 * @throws {ContainerConfigError} for incomplete seccomp or AppArmor profiles.
 */
export function linuxContainerConfig(
  pod: Pod,
  container: Container,
  options: LinuxContainerOptions,
): LinuxContainerInit {
  return {
    resources: containerLinuxResources(pod, container, options.node),
    securityContext: containerSecurityContext(pod, container, options),
  };
}

export {
  DEFAULT_MASKED_PATHS,
  DEFAULT_READONLY_PATHS,
  type ImageUser,
  namespaceOptions,
  RunAsNonRootError,
  verifyRunAsNonRoot,
} from "./security_context.ts";
