/**
 * Linux parts of the CRI sandbox/container configs: namespace options, a minimal security
 * context and CPU/memory limits from the container's resources.
 *
 * @module
 */

import type { MessageInitShape } from "../runtime/mod.ts";
import type {
  LinuxContainerConfigSchema,
  LinuxPodSandboxConfigSchema,
  NamespaceOptionSchema,
} from "../runtime/mod.ts";
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

/** Linux part of the sandbox config. */
export function linuxSandboxConfig(pod: Pod): LinuxSandboxInit {
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
    cgroupParent: "",
    securityContext: sc,
    sysctls: Object.fromEntries(
      (psc.sysctls ?? []).map((s) => [s.name, s.value]),
    ),
  };
}

const SUFFIX: Record<string, number> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
  Ei: 1024 ** 6,
};
const QUANTITY_REGEXP =
  /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

/**
 * Parses a Kubernetes resource quantity ("100m", "1.5", "128Mi", "1G") to a number in base
 * units. Throws RangeError on malformed input.
 */
export function parseQuantity(value: string | number): number {
  if (typeof value === "number") return value;
  const m = QUANTITY_REGEXP.exec(value.trim());
  const n = m ? Number(m[1]) : NaN;
  if (!m || !Number.isFinite(n)) {
    throw new RangeError(
      `Invalid quantity "${value}": use a number with an optional suffix such as 100m, 2, 128Mi or 1G`,
    );
  }
  return n * SUFFIX[m[2] ?? ""]!;
}

const CPU_PERIOD_US = 100_000;
const MIN_SHARES = 2;

/** CPU/memory limits for the container, kubelet-style (shares from request, quota from limit). */
function linuxResources(
  container: Container,
): NonNullable<LinuxContainerInit["resources"]> {
  const req = container.resources?.requests ?? {};
  const lim = container.resources?.limits ?? {};
  const cpuReq = req.cpu ?? lim.cpu;
  const milliReq = cpuReq === undefined
    ? 0
    : Math.ceil(parseQuantity(cpuReq) * 1000);
  const shares = Math.max(MIN_SHARES, Math.floor((milliReq * 1024) / 1000));
  const out: NonNullable<LinuxContainerInit["resources"]> = {
    cpuShares: BigInt(shares),
  };
  if (lim.cpu !== undefined) {
    const milliLimit = Math.ceil(parseQuantity(lim.cpu) * 1000);
    out.cpuPeriod = BigInt(CPU_PERIOD_US);
    out.cpuQuota = BigInt(
      Math.max(1000, Math.floor((milliLimit * CPU_PERIOD_US) / 1000)),
    );
  }
  if (lim.memory !== undefined) {
    out.memoryLimitInBytes = BigInt(Math.floor(parseQuantity(lim.memory)));
  }
  return out;
}

/** Linux part of a container config. */
export function linuxContainerConfig(
  pod: Pod,
  container: Container,
): LinuxContainerInit {
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
  if (runAsGroup !== undefined) sc.runAsGroup = { value: BigInt(runAsGroup) };
  if (csc.capabilities) {
    sc.capabilities = {
      addCapabilities: csc.capabilities.add ?? [],
      dropCapabilities: csc.capabilities.drop ?? [],
    };
  }
  return { resources: linuxResources(container), securityContext: sc };
}
