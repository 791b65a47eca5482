/**
 * Upstream's AppArmor admit handler (`NewAppArmorAdmitHandler` in kubelet/lifecycle, with
 * `pkg/security/apparmor` validate.go): on a host without AppArmor, a pending pod that asks
 * for a profile other than Unconfined is refused with reason `AppArmor`, never run unconfined.
 *
 * @module
 */
import type { PodAdmission } from "../lifecycle/sync_loop.ts";
import type { Pod } from "../types.ts";
import { APPARMOR_ANNOTATION_PREFIX } from "../containers/security_context.ts";
import { APPARMOR_ENABLED_FILE } from "../containers/pod_environment.ts";

/** The rejection reason (upstream `AppArmorNotAdmittedReason`). */
export const APPARMOR_NOT_ADMITTED_REASON = "AppArmor";

/** Upstream's error for a kernel without AppArmor. */
export const APPARMOR_NOT_ENABLED = "AppArmor is not enabled on the host";

/**
 * Why the host cannot enforce AppArmor, from the enabled file's text or the error reading it;
 * undefined when it can. A file that cannot be read counts as "cannot enforce": a pod that
 * asks for confinement is refused rather than run without it.
 */
export function appArmorHostError(enabled: string | Error): string | undefined {
  if (typeof enabled === "string") {
    return enabled.startsWith("Y") ? undefined : APPARMOR_NOT_ENABLED;
  }
  return `AppArmor support of the host is unknown: cannot read ${APPARMOR_ENABLED_FILE}: ${enabled.message}`;
}

const UNCONFINED = "Unconfined";
const UNCONFINED_ANNOTATION = "unconfined";

/** Whether `pod` asks for an AppArmor profile other than Unconfined (upstream `isRequired`). */
export function appArmorRequired(pod: Pod): boolean {
  const podProfile = pod.spec.securityContext?.appArmorProfile;
  if (podProfile && podProfile.type !== UNCONFINED) return true;
  const containers = [
    ...(pod.spec.initContainers ?? []),
    ...pod.spec.containers,
    ...(pod.spec.ephemeralContainers ?? []),
  ];
  for (const c of containers) {
    const profile = c.securityContext?.appArmorProfile;
    if (profile && profile.type !== UNCONFINED) return true;
  }
  // upstream stops at the first annotation of its (random) map order; any one asking for a
  // profile counts here, so the answer does not depend on the order
  return Object.entries(pod.metadata.annotations ?? {}).some(([key, value]) =>
    key.startsWith(APPARMOR_ANNOTATION_PREFIX) &&
    value !== UNCONFINED_ANNOTATION
  );
}

/** The refusal of `pod` on a host that cannot enforce AppArmor (`hostError`); none → undefined. */
export function appArmorRefusal(
  pod: Pod,
  hostError: string | undefined,
): { reason: string; message: string } | undefined {
  // a pod already running or finished is not checked again
  const phase = pod.status?.phase ?? "Pending";
  if (hostError === undefined || phase !== "Pending") return undefined;
  if (!appArmorRequired(pod)) return undefined;
  return {
    reason: APPARMOR_NOT_ADMITTED_REASON,
    message: `Cannot enforce AppArmor: ${hostError}`,
  };
}

/** `base`, then the AppArmor check against the host's `hostError` (undefined: enforceable). */
export function withAppArmorAdmission(
  base: PodAdmission,
  hostError: string | undefined,
): PodAdmission {
  return {
    admit(pod) {
      const first = base.admit(pod);
      if (!first.admit) return first;
      const refusal = appArmorRefusal(pod, hostError);
      return refusal ? { admit: false, ...refusal } : first;
    },
    reject: (pod, refusal) => base.reject(pod, refusal),
  };
}
