/**
 * Device allocation as an admit step (upstream's resource allocation admit
 * handler, after sysctls and before the node predicates): a pod the devices
 * cannot be picked for is refused with `UnexpectedAdmissionError`.
 *
 * @module
 */

import type { Pod, PodAdmission } from "../pod/mod.ts";
import type { DeviceManager } from "./device_manager.ts";

/** `base`'s verdict, then the device pick when `base` admits. */
export function withDeviceAdmission(
  base: PodAdmission,
  devices: () => Pick<DeviceManager, "admit"> | undefined,
  activePods: () => readonly Pod[],
): PodAdmission {
  return {
    admit(pod) {
      const first = base.admit(pod);
      const manager = devices();
      if (!first.admit || !manager) return first;
      const active = new Set(activePods().map((p) => p.metadata.uid ?? ""));
      return manager.admit(pod, active);
    },
    reject: (pod, refusal) => base.reject(pod, refusal),
  };
}
