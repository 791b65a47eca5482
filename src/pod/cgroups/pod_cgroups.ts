/**
 * The pod's cgroup name, sent as the sandbox's `linux.cgroupParent` (upstream
 * `GetPodContainerName` of the pod container manager): `<cgroupRoot>/kubepods/pod<uid>` for
 * Guaranteed pods and `<cgroupRoot>/kubepods/<burstable|besteffort>/pod<uid>` otherwise, in
 * the cgroupfs driver's path form or the systemd driver's expanded slice form. Without
 * `cgroupsPerQOS` every pod gets the cgroup root itself. Pure.
 *
 * @module
 */

import { podQOSClass } from "./pod_resources.ts";
import { sliceComponents, slicePath } from "../../systemd/mod.ts";
import type { Pod } from "../types.ts";

/** The kubelet settings that place pod cgroups. */
export interface PodCgroupOptions {
  /** `cgroupRoot`; "" means the root ("/"), as upstream defaults it with `cgroupsPerQOS`. */
  cgroupRoot?: string;
  /** `cgroupsPerQOS` (default true). */
  cgroupsPerQOS?: boolean;
  /** `cgroupDriver` (default "cgroupfs"). */
  cgroupDriver?: string;
}

/** Splits a cgroupfs path into components (`/a/b` → [a, b]). */
function cgroupfsComponents(path: string): string[] {
  return path.split("/").filter((p) => p !== "");
}

/** `/a/b/c`: the cgroupfs form of a name (upstream `ToCgroupfs`). */
function toCgroupfs(parts: string[]): string {
  return "/" + parts.join("/");
}

/** The root's components in the driver's form of `cgroupRoot`. */
function rootComponents(options: PodCgroupOptions): string[] {
  const rootText = options.cgroupRoot || "/";
  return options.cgroupDriver === "systemd"
    ? sliceComponents(rootText)
    : cgroupfsComponents(rootText);
}

function named(parts: string[], options: PodCgroupOptions): string {
  return options.cgroupDriver === "systemd"
    ? slicePath(parts)
    : toCgroupfs(parts);
}

/**
 * `kubepods` and its `burstable` and `besteffort` tiers under the root, in the driver's form
 * (upstream `qosContainersInfo`; Guaranteed pods live in `kubepods` itself).
 */
export function qosCgroupNames(
  options: PodCgroupOptions,
): { kubepods: string; burstable: string; besteffort: string } {
  const kubepods = [...rootComponents(options), "kubepods"];
  return {
    kubepods: named(kubepods, options),
    burstable: named([...kubepods, "burstable"], options),
    besteffort: named([...kubepods, "besteffort"], options),
  };
}

/** The pod's cgroup in the driver's form, as the runtime gets it in `cgroupParent`. */
export function podCgroupParent(pod: Pod, options: PodCgroupOptions): string {
  const root = rootComponents(options);
  // upstream's no-op pod container manager hands out the root in cgroupfs form
  if (options.cgroupsPerQOS === false) return toCgroupfs(root);
  const qos = podQOSClass(pod);
  const parts = [...root, "kubepods"];
  if (qos !== "Guaranteed") parts.push(qos.toLowerCase());
  parts.push(`pod${pod.metadata.uid ?? ""}`);
  return named(parts, options);
}
