/**
 * Which cgroups `/stats/summary` reports as system containers, from the configuration.
 *
 * @module
 */

import { podCgroupRoot } from "./start_eviction.ts";

/**
 * The system containers upstream's summary reports (`GetSystemContainersStats`): the
 * configured kubelet, runtime and system cgroups, and the pods' cgroup root.
 */
export function systemCgroups(config: {
  kubeletCgroups?: string | undefined;
  runtimeCgroups?: string | undefined;
  systemCgroups?: string | undefined;
  cgroupRoot?: string | undefined;
  cgroupsPerQOS?: boolean | undefined;
  cgroupDriver?: string | undefined;
}): { name: string; cgroup: string }[] {
  const named: [string, string | undefined][] = [
    ["kubelet", config.kubeletCgroups],
    ["runtime", config.runtimeCgroups],
    ["misc", config.systemCgroups],
    ["pods", podCgroupRoot(config)],
  ];
  return named.flatMap(([name, cgroup]) => cgroup ? [{ name, cgroup }] : []);
}
