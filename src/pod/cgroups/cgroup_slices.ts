/**
 * The systemd cgroup driver as the pod cgroup manager sees it: each kubelet cgroup in the
 * systemd form is also a slice unit (`src/systemd/slices.ts` decides its properties), reached
 * over the system bus directly or, under the planned permission lists, through the cgroup
 * agent. Nothing here but the manager's interface and the direct driver.
 *
 * @module
 */

import { systemdSlices, type SystemdUnits } from "../../systemd/mod.ts";
import type { CgroupSettings } from "./cgroup_settings.ts";

/** What the pod cgroup manager asks of the systemd driver. */
export interface CgroupSlices {
  /** Starts the cgroup's slice unit when systemd lacks it (before its directory is made). */
  start(path: string): Promise<void>;
  /** Sends the settings as unit properties. */
  set(path: string, settings: CgroupSettings): Promise<void>;
  /** Stops the slice unit (systemd removes what it made; the caller removes the rest). */
  stop(path: string): Promise<void>;
}

/** The driver over a systemd connection of the kubelet's own. */
export function systemdCgroupSlices(systemd: SystemdUnits): CgroupSlices {
  return systemdSlices(systemd);
}
