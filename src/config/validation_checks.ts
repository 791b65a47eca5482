/**
 * The multi-message validation checks (enforceNodeAllocatable, image
 * credentials, pod logs dir, crash-loop back-off, shutdown, reserved
 * memory), used by the rule table in `validation_rules.ts`.
 * @module
 */
import { parseQuantity } from "../util/quantity.ts";
import type { KubeletConfiguration } from "./schema.ts";
import {
  cleanPath,
  imagePatternProblem,
  metaDuration,
  ms,
  q,
} from "./validation_support.ts";

/** One validation finding: the field path and the upstream message. */
export interface ValidationIssue {
  field: string;
  message: string;
}

/** What a rule sees. */
export interface RuleContext {
  readonly c: KubeletConfiguration;
  gate(name: string): boolean;
}

/** A rule: a message (or list of messages) when violated, else nothing. */
export interface Rule {
  readonly field: string;
  check(ctx: RuleContext): string | string[] | ValidationIssue[] | undefined;
}

/** Prefix of most upstream validation messages. */
export const IC = "invalid configuration: ";

function isZeroQuantity(text: string): boolean {
  try {
    return parseQuantity(text).value === 0;
  } catch {
    return false;
  }
}

/** Inclusive range test. */
export function between(v: number, lo: number, hi: number): boolean {
  return v >= lo && v <= hi;
}

/** A rule: `<field> (--<flag>) N must not be a negative number`. */
export function negative(
  field: string,
  flag: string,
  get: (c: KubeletConfiguration) => number | undefined,
): Rule {
  return {
    field,
    check: ({ c }) => {
      const v = get(c) ?? 0;
      return v < 0
        ? `${IC}${field} (--${flag}) ${v} must not be a negative number`
        : undefined;
    },
  };
}

/** A rule: `<field> (--<flag>) N must be between A and B, inclusive`. */
export function range(
  field: string,
  flag: string,
  bounds: [number, number],
  get: (c: KubeletConfiguration) => number | undefined,
): Rule {
  return {
    field,
    check: ({ c }) => {
      const v = get(c) ?? 0;
      return between(v, bounds[0], bounds[1])
        ? undefined
        : `${IC}${field} (--${flag}) ${v} must be between ${bounds[0]} and ${
          bounds[1]
        }, inclusive`;
    },
  };
}

const ENFORCEMENTS = [
  "pods",
  "system-reserved",
  "system-reserved-compressible",
  "kube-reserved",
  "kube-reserved-compressible",
  "none",
];
const ENA = "enforceNodeAllocatable (--enforce-node-allocatable)";

/**
 * `enforceNodeAllocatable`: the two incompatible pairs, then per element in
 * order: duplicates, the reserved cgroup each enforcement needs, `none`
 * alone, known options, and `cgroupsPerQOS`.
 */
export function enforceNodeAllocatable({ c }: RuleContext): string[] {
  const list = c.enforceNodeAllocatable;
  const out: string[] = [];
  const pair = (a: string, b: string) => {
    if (list.includes(a) && list.includes(b)) {
      out.push(
        `${IC}both ${q(a)} and ${q(b)} cannot be specified together in ${ENA}`,
      );
    }
  };
  pair("system-reserved", "system-reserved-compressible");
  pair("kube-reserved", "kube-reserved-compressible");
  const seen = new Set<string>();
  for (const val of list) {
    if (seen.has(val)) {
      out.push(`${IC}duplicated enforcements ${q(val)} in ${ENA}`);
      continue;
    }
    seen.add(val);
    if (
      val.startsWith("system-reserved") && ENFORCEMENTS.includes(val) &&
      !c.systemReservedCgroup
    ) {
      out.push(
        `${IC}systemReservedCgroup (--system-reserved-cgroup) must be specified when "system-reserved" or "system-reserved-compressible" included in ${ENA}`,
      );
    }
    if (
      val.startsWith("kube-reserved") && ENFORCEMENTS.includes(val) &&
      !c.kubeReservedCgroup
    ) {
      out.push(
        `${IC}kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "kube-reserved" or "kube-reserved-compressible" included in ${ENA}`,
      );
    }
    if (val === "none") {
      if (list.length > 1) {
        out.push(
          `${IC}${ENA} may not contain additional enforcements when "none" is specified`,
        );
      }
      continue;
    }
    if (!ENFORCEMENTS.includes(val)) {
      out.push(
        `${IC}option ${q(val)} specified for ${ENA}. Valid options are ${
          ENFORCEMENTS.slice(0, 5).map(q).join(", ")
        } or "none"`,
      );
      continue;
    }
    if (!c.cgroupsPerQOS) {
      out.push(
        `${IC}cgroupsPerQOS (--cgroups-per-qos) must be set to true when ${
          q(val)
        } contained in ${ENA}`,
      );
    }
  }
  return out;
}

const PULL_POLICIES = [
  "NeverVerify",
  "NeverVerifyPreloadedImages",
  "NeverVerifyAllowlistedImages",
  "AlwaysVerify",
];

/**
 * `imagePullCredentialsVerificationPolicy` and
 * `preloadedImagesVerificationAllowlist`: checked with the
 * `KubeletEnsureSecretPulledImages` gate, forbidden without it.
 */
export function imagePullCredentials({ c, gate }: RuleContext): string[] {
  const policy = c.imagePullCredentialsVerificationPolicy ?? "";
  const allowlist = c.preloadedImagesVerificationAllowlist ?? [];
  const out: string[] = [];
  if (gate("KubeletEnsureSecretPulledImages")) {
    if (!PULL_POLICIES.includes(policy)) {
      out.push(
        `${IC}option ${
          q(policy)
        } specified for imagePullCredentialsVerificationPolicy. Valid options are "NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"`,
      );
    }
    if (allowlist.length > 0 && policy !== "NeverVerifyAllowlistedImages") {
      out.push(
        `${IC}can't set \`preloadedImagesVerificationAllowlist\` if \`imagePullCredentialsVertificationPolicy\` is not "NeverVerifyAllowlistedImages"`,
      );
    } else {
      for (const pattern of allowlist) {
        const problem = imagePatternProblem(pattern);
        if (problem) {
          out.push(
            `${IC}invalid image pattern in \`preloadedImagesVerificationAllowlist\`: ${problem}`,
          );
          break;
        }
      }
    }
    return out;
  }
  if (policy !== "") {
    out.push(
      `${IC}\`imagePullCredentialsVerificationPolicy\` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled`,
    );
  }
  if (allowlist.length > 0) {
    out.push(
      `${IC}\`preloadedImagesVerificationAllowlist\` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled`,
    );
  }
  return out;
}

/** `podLogsDir`: set, absolute, normalized (Go `filepath.Clean`), ASCII only. */
export function podLogsDir({ c }: RuleContext): string[] {
  const dir = c.podLogsDir;
  const out: string[] = [];
  if (dir === "") out.push(`${IC}podLogsDir was not specified`);
  if (!dir.startsWith("/")) {
    out.push(`${IC}pod logs path ${q(dir)} must be absolute path`);
  }
  if (cleanPath(dir) !== dir) {
    out.push(`${IC}pod logs path ${q(dir)} must be normalized`);
  }
  if ([...dir].some((ch) => (ch.codePointAt(0) ?? 0) > 127)) {
    out.push(`${IC}pod logs path ${q(dir)} mut contains ASCII characters only`);
  }
  return out;
}

/**
 * `crashLoopBackOff.maxContainerRestartPeriod`: required and within 1s–300s
 * with the `KubeletCrashLoopBackOffMax` gate, forbidden without it.
 */
export function crashLoopBackOff({ c, gate }: RuleContext): string | undefined {
  const max = c.crashLoopBackOff.maxContainerRestartPeriod;
  if (!gate("KubeletCrashLoopBackOffMax")) {
    return max === undefined
      ? undefined
      : `${IC}FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set`;
  }
  if (max === undefined) {
    return `${IC}FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set`;
  }
  const millis = Math.trunc(ms(max));
  return between(millis, 1000, 300000)
    ? undefined
    : `${IC}CrashLoopBackOff.MaxContainerRestartPeriod (got: ${
      ms(max) / 1000
    } seconds) must be set between 1s and 300s`;
}

/**
 * Graceful node shutdown: the two periods against each other and against the
 * `GracefulNodeShutdown` and `GracefulNodeShutdownBasedOnPodPriority` gates.
 */
export function shutdown({ c, gate }: RuleContext): string[] {
  const period = ms(c.shutdownGracePeriod);
  const critical = ms(c.shutdownGracePeriodCriticalPods);
  const byPriority = c.shutdownGracePeriodByPodPriority ?? [];
  const out: string[] = [];
  if (gate("GracefulNodeShutdown")) {
    if (critical > period) {
      out.push(
        `${IC}shutdownGracePeriodCriticalPods ${
          metaDuration(c.shutdownGracePeriodCriticalPods)
        } must be <= shutdownGracePeriod ${
          metaDuration(c.shutdownGracePeriod)
        }`,
      );
    }
    if (period < 0 || (period > 0 && period < 1000)) {
      out.push(
        `${IC}shutdownGracePeriod ${
          metaDuration(c.shutdownGracePeriod)
        } must be either zero or otherwise >= 1 sec`,
      );
    }
    if (critical < 0 || (critical > 0 && critical < 1000)) {
      out.push(
        `${IC}shutdownGracePeriodCriticalPods ${
          metaDuration(c.shutdownGracePeriodCriticalPods)
        } must be either zero or otherwise >= 1 sec`,
      );
    }
  }
  if ((period > 0 || critical > 0) && !gate("GracefulNodeShutdown")) {
    out.push(
      `${IC}specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown`,
    );
  }
  if (
    gate("GracefulNodeShutdownBasedOnPodPriority") && byPriority.length > 0 &&
    (period > 0 || critical > 0)
  ) {
    out.push(
      `${IC}Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time`,
    );
  }
  if (
    !gate("GracefulNodeShutdownBasedOnPodPriority") && byPriority.length > 0
  ) {
    out.push(
      `${IC}Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority`,
    );
  }
  return out;
}

/**
 * `reservedMemory` (upstream `validateReservedMemoryConfiguration`,
 * validation_reserved_memory.go): supported limit types, no repeated
 * (NUMA node, resource) pair, no zero quantity.
 */
export function reservedMemory({ c }: RuleContext): string[] {
  const out: string[] = [];
  const seen = new Map<number, Set<string>>();
  for (const entry of c.reservedMemory ?? []) {
    const node = entry.numaNode;
    const names = seen.get(node) ?? new Set<string>();
    seen.set(node, names);
    for (const name of Object.keys(entry.limits).sort()) {
      if (name !== "memory" && !name.startsWith("hugepages-")) {
        out.push(
          `${IC}the limit type ${
            q(name)
          } for NUMA node ${node} is not supported, only [memory hugepages-<HugePageSize>] is accepted`,
        );
      }
      if (names.has(name)) {
        out.push(
          `${IC}the reserved memory has a duplicate value for NUMA node ${node} and resource ${
            q(name)
          }`,
        );
      } else names.add(name);
      if (isZeroQuantity(entry.limits[name] ?? "0")) {
        out.push(
          `${IC}reserved memory may not be zero for NUMA node ${node} and resource ${
            q(name)
          }`,
        );
      }
    }
  }
  return out;
}
