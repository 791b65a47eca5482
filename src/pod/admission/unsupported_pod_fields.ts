/**
 * Pod fields upstream's kubelet acts on and this one does not: a pod that sets one is refused
 * at admission (Failed, as upstream `rejectPod`), never run as if the field were absent.
 * `hostUsers: false` and `runtimeClassName` are refused where upstream refuses them, at
 * sandbox creation (`runtime_class.ts`).
 *
 * @module
 */
import type { PodAdmission } from "../lifecycle/sync_loop.ts";
import type { Pod } from "../types.ts";

/** The rejection reason of a pod that sets a field this kubelet does not carry out. */
export const UNSUPPORTED_POD_FIELD_REASON = "UnsupportedPodField";

/** The parts of the spec read here, beyond the shared model. */
interface UnsupportedSpec {
  resourceClaims?: unknown[];
}

/** The first field of `pod` this kubelet would otherwise ignore, with why; none → undefined. */
export function unsupportedPodField(pod: Pod): string | undefined {
  const spec = pod.spec as UnsupportedSpec;
  if ((spec.resourceClaims ?? []).length > 0) {
    return "spec.resourceClaims: dynamic resource allocation (DRA) drivers are not supported";
  }
  return undefined;
}

/** `base`, then a refusal of the pods that set a field this kubelet does not carry out. */
export function withUnsupportedFieldRefusal(base: PodAdmission): PodAdmission {
  return {
    admit(pod) {
      const first = base.admit(pod);
      if (!first.admit) return first;
      const field = unsupportedPodField(pod);
      return field === undefined ? first : {
        admit: false,
        reason: UNSUPPORTED_POD_FIELD_REASON,
        message: `${field} (kubelet.ts does not implement it)`,
      };
    },
    reject: (pod, refusal) => base.reject(pod, refusal),
  };
}
