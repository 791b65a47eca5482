/**
 * Pod admission for `spec.securityContext.sysctls` (upstream pkg/kubelet/sysctl): the safe
 * sysctls the running kernel has, plus the namespaced ones named in `allowedUnsafeSysctls`
 * (exact names or `prefix*`). Any other sysctl rejects the pod with reason `SysctlForbidden`,
 * and so does a net sysctl with `hostNetwork` or an IPC sysctl with `hostIPC`: they would
 * change the node's own namespace.
 *
 * @module
 */

import { normalizeSysctlName } from "../../util/sysctl_name.ts";
export { normalizeSysctlName };
import { podQOSClass } from "../cgroups/pod_resources.ts";
import type { PodAdmission } from "../lifecycle/sync_loop.ts";
import type { Pod, PodStatus } from "../types.ts";

/** Upstream's admission reason for a pod with a forbidden sysctl. */
export const SYSCTL_FORBIDDEN_REASON = "SysctlForbidden";

type Namespace = "ipc" | "net" | "uts";

/** Safe sysctls and the kernel version each needs (upstream safe_sysctls.go). */
const SAFE_SYSCTLS: readonly { name: string; kernel?: [number, number] }[] = [
  { name: "kernel.shm_rmid_forced" },
  { name: "net.ipv4.ip_local_port_range" },
  { name: "net.ipv4.tcp_syncookies" },
  { name: "net.ipv4.ping_group_range" },
  { name: "net.ipv4.ip_unprivileged_port_start" },
  { name: "net.ipv4.ip_local_reserved_ports", kernel: [3, 16] },
  { name: "net.ipv4.tcp_keepalive_time", kernel: [4, 5] },
  { name: "net.ipv4.tcp_fin_timeout", kernel: [4, 6] },
  { name: "net.ipv4.tcp_keepalive_intvl", kernel: [4, 5] },
  { name: "net.ipv4.tcp_keepalive_probes", kernel: [4, 5] },
  { name: "net.ipv4.tcp_rmem", kernel: [4, 15] },
  { name: "net.ipv4.tcp_wmem", kernel: [4, 15] },
];

/** Which namespace a sysctl lives in (component-helpers sysctl namespace tables). */
const EXACT_NAMESPACES: Readonly<Record<string, Namespace>> = {
  "kernel.sem": "ipc",
  "kernel.domainname": "uts",
  "kernel.hostname": "uts",
};
const PREFIX_NAMESPACES: readonly [string, Namespace][] = [
  ["kernel.shm", "ipc"],
  ["kernel.msg", "ipc"],
  ["fs.mqueue.", "ipc"],
  ["net.", "net"],
];

const SYSCTL_PATTERN_REGEXP =
  /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$/;
const SYSCTL_MAX_LENGTH = 253;

/** Result of {@linkcode SysctlAllowlist.admit}. */
export type AdmitResult =
  | { admit: true }
  | { admit: false; reason: string; message: string };

function namespaceOf(name: string): Namespace | undefined {
  const exact = EXACT_NAMESPACES[name];
  if (exact) return exact;
  return PREFIX_NAMESPACES.find(([prefix]) => name.startsWith(prefix))?.[1];
}

/** Parses `major.minor` from a kernel release such as `6.8.0-45-generic`. */
export function parseKernelVersion(
  release: string | undefined,
): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release ?? "");
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function atLeast(have: [number, number], need: [number, number]): boolean {
  return have[0] !== need[0] ? have[0] > need[0] : have[1] >= need[1];
}

/** The safe sysctls for a kernel; an unknown kernel gets only the ungated ones, as upstream. */
export function safeSysctls(kernelRelease?: string): string[] {
  const version = parseKernelVersion(kernelRelease);
  return SAFE_SYSCTLS.filter((s) =>
    !s.kernel || (version !== undefined && atLeast(version, s.kernel))
  ).map((s) => s.name);
}

/** Which sysctls pods may set on this node. */
export class SysctlAllowlist {
  #exact = new Map<string, Namespace>();
  #prefixes = new Map<string, Namespace>();

  /**
   * @param patterns safe sysctls plus `allowedUnsafeSysctls`
   * @throws {TypeError} for a malformed pattern or one outside a known namespace (upstream
   * refuses to start with such an `allowedUnsafeSysctls`).
   */
  constructor(patterns: readonly string[]) {
    for (const pattern of patterns) {
      if (
        pattern.length > SYSCTL_MAX_LENGTH ||
        !SYSCTL_PATTERN_REGEXP.test(pattern)
      ) {
        throw new TypeError(
          `allowedUnsafeSysctls: sysctl "${pattern}" must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_PATTERN_REGEXP.source}`,
        );
      }
      const prefixed = pattern.endsWith("*");
      const name = normalizeSysctlName(
        prefixed ? pattern.slice(0, -1) : pattern,
      );
      const ns = namespaceOf(name);
      if (!ns) {
        throw new TypeError(
          `allowedUnsafeSysctls: the sysctls "${name}" are not known to be namespaced; only kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*, net.* and the UTS names may be allowed`,
        );
      }
      (prefixed ? this.#prefixes : this.#exact).set(name, ns);
    }
  }

  #check(raw: string, hostNetwork: boolean, hostIPC: boolean): string | null {
    const name = normalizeSysctlName(raw);
    let ns = this.#exact.get(name);
    if (ns === undefined) {
      for (const [prefix, prefixNs] of this.#prefixes) {
        if (name.startsWith(prefix)) {
          ns = prefixNs;
          break;
        }
      }
    }
    if (ns === undefined) return `"${name}" not allowlisted`;
    if (ns === "ipc" && hostIPC) {
      return `"${name}" not allowed with host IPC enabled`;
    }
    if (ns === "net" && hostNetwork) {
      return `"${name}" not allowed with host Net enabled`;
    }
    return null;
  }

  /** Upstream `patternAllowlist.Admit`: the first sysctl that is not allowed rejects the pod. */
  admit(pod: Pod): AdmitResult {
    for (const s of pod.spec.securityContext?.sysctls ?? []) {
      const problem = this.#check(
        s.name,
        pod.spec.hostNetwork === true,
        pod.spec.hostIPC === true,
      );
      if (problem) {
        return {
          admit: false,
          reason: SYSCTL_FORBIDDEN_REASON,
          message: `forbidden sysctl: ${problem}`,
        };
      }
    }
    return { admit: true };
  }
}

/** The allowlist for a node: its safe sysctls plus `allowedUnsafeSysctls`. */
export function createSysctlAllowlist(
  allowedUnsafeSysctls: readonly string[],
  options: { kernelRelease?: string | undefined } = {},
): SysctlAllowlist {
  return new SysctlAllowlist([
    ...safeSysctls(options.kernelRelease),
    ...allowedUnsafeSysctls,
  ]);
}

/**
 * The kubelet's {@linkcode PodAdmission} over a sysctl allowlist: a refused pod gets upstream
 * `rejectPod`'s status (Failed, the reason, "Pod was rejected: <message>", its QoS class).
 */
export function sysctlAdmission(
  allowlist: SysctlAllowlist,
  statuses: { setPodStatus(pod: Pod, status: PodStatus): void },
): PodAdmission {
  return {
    admit: (pod) => allowlist.admit(pod),
    reject(pod, refusal) {
      statuses.setPodStatus(pod, {
        qosClass: podQOSClass(pod),
        phase: "Failed",
        reason: refusal.reason,
        message: `Pod was rejected: ${refusal.message}`,
      });
    },
  };
}
