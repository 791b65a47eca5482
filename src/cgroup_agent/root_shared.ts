/**
 * Whether the kubelet's root dir must be made a shared mount at start (upstream
 * `MakeRShared`), decided without I/O from the mount table. Volumes under the root with
 * `Bidirectional` or `HostToContainer` propagation need their mount to be shared: containerd
 * refuses them on a private one, which `/` is on hosts without systemd. Upstream binds the
 * root on itself whenever it is not on a shared mount; here that bind is refused while mounts
 * already exist below the root: a plain bind would show the host an empty copy of the root,
 * and the volumes of running pods (secret and projected tmpfs) would stop getting updates.
 *
 * @module
 */

import type { MountInfoEntry } from "./volume_tmpfs.ts";
import { isInside } from "./volume_subpath.ts";

/** What to do with the root dir (the executor returns the plan it carried out). */
export type RootSharePlan =
  /** Already on a shared mount (the one at `mountPoint`). */
  | { action: "nothing"; mountPoint: string }
  /** Bind the root on itself, then mark it `rshared`. */
  | { action: "share" }
  /** Not shared, and binding would do harm (or cannot be decided): why. */
  | { action: "refuse"; reason: string };

/**
 * The mount `path` is on (upstream `findMountInfo`): the last entry of the table whose mount
 * point is `path` or one of its parents, since later mounts cover earlier ones.
 */
export function mountHolding(
  entries: readonly MountInfoEntry[],
  path: string,
): MountInfoEntry | undefined {
  return entries.findLast((e) => isInside(path, e.mountPoint));
}

/** True when the mount propagates to and from its peers (a `shared:N` tag). */
export function isSharedMount(entry: MountInfoEntry): boolean {
  return entry.optionalFields.some((f) => f.startsWith("shared:"));
}

/** The plan for `root` (its real path) under the current mount table. */
export function planRootShare(
  entries: readonly MountInfoEntry[],
  root: string,
): RootSharePlan {
  const holder = mountHolding(entries, root);
  if (!holder) {
    return {
      action: "refuse",
      reason: `no mount in the mount table holds "${root}"`,
    };
  }
  if (isSharedMount(holder)) {
    return { action: "nothing", mountPoint: holder.mountPoint };
  }
  const below = entries.filter((e) =>
    e.mountPoint !== root && isInside(e.mountPoint, root)
  ).map((e) => e.mountPoint);
  if (below.length > 0) {
    return {
      action: "refuse",
      reason: `"${root}" is on the private mount "${holder.mountPoint}" and ${
        below.length === 1 ? "a mount exists" : `${below.length} mounts exist`
      } below it ("${below[0]}"${
        below.length > 1 ? ", ..." : ""
      }), which a bind of the root on itself would hide from the host`,
    };
  }
  return { action: "share" };
}

/** What an operator does about a root dir that is not shared. */
export function rootShareFix(root: string): string {
  return `stop the pods on the node (drain it) and restart the kubelet, or run "mount --bind ${root} ${root} && mount --make-rshared ${root}" before the kubelet starts`;
}
