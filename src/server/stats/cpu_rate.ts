/**
 * `usageNanoCores` from two CPU readings (upstream `getAndUpdateContainerUsageNanoCores`):
 * the runtime gives a cumulative `usageCoreNanoSeconds`, the rate needs the previous
 * reading of the same cgroup or container, which {@linkcode CpuRates} keeps between requests.
 *
 * @module
 */

import type {
  CriContainerStats,
  CriCpu,
  CriPodSandboxStats,
} from "./summary.ts";

/** One cumulative CPU reading. */
export interface CpuSample {
  timestampNs: bigint;
  usageCoreNanoSeconds: bigint;
}

/**
 * The rate between two readings in nanocores; undefined without a previous reading, when the
 * counter went back (a restarted container) or when no time passed.
 */
export function usageNanoCores(
  previous: CpuSample | undefined,
  current: CpuSample,
): number | undefined {
  if (!previous) return undefined;
  if (current.usageCoreNanoSeconds < previous.usageCoreNanoSeconds) {
    return undefined;
  }
  const interval = current.timestampNs - previous.timestampNs;
  if (interval <= 0n) return undefined;
  const used = current.usageCoreNanoSeconds - previous.usageCoreNanoSeconds;
  return Math.floor(Number(used) / Number(interval) * 1e9);
}

/** The last CPU reading per cgroup or container ID. */
export class CpuRates {
  #last = new Map<string, CpuSample>();

  /** The rate since the previous reading of `key`, remembering this one. */
  observe(key: string, sample: CpuSample): number | undefined {
    const rate = usageNanoCores(this.#last.get(key), sample);
    this.#last.set(key, sample);
    return rate;
  }

  /** Forgets the readings of keys not in `seen` (containers and pods that are gone). */
  retain(seen: ReadonlySet<string>): void {
    for (const key of this.#last.keys()) {
      if (!seen.has(key)) this.#last.delete(key);
    }
  }
}

/** `cpu` with `usageNanoCores` computed when the runtime did not give it. */
function withRate(
  rates: CpuRates,
  key: string,
  cpu: CriCpu | undefined,
  seen: Set<string>,
): CriCpu | undefined {
  // the runtime's own rate wins, as upstream bypasses its cache then
  if (!cpu || cpu.usageNanoCores || !cpu.usageCoreNanoSeconds || !key) {
    return cpu;
  }
  seen.add(key);
  const rate = rates.observe(key, {
    timestampNs: cpu.timestamp,
    usageCoreNanoSeconds: cpu.usageCoreNanoSeconds.value,
  });
  return rate === undefined
    ? cpu
    : { ...cpu, usageNanoCores: { value: BigInt(rate) } };
}

/**
 * The pods' stats with each container's and sandbox's `usageNanoCores` filled from the
 * previous reading; readings of containers and sandboxes no longer listed are forgotten.
 */
export function fillUsageNanoCores(
  pods: readonly CriPodSandboxStats[],
  rates: CpuRates,
  extraKeys: readonly string[] = [],
): CriPodSandboxStats[] {
  const seen = new Set(extraKeys);
  const out = pods.map((pod): CriPodSandboxStats => {
    const linux = pod.linux;
    if (!linux) return pod;
    const containers = linux.containers.map((c): CriContainerStats => {
      const cpu = withRate(rates, c.attributes?.id ?? "", c.cpu, seen);
      return cpu === c.cpu ? c : { ...c, cpu };
    });
    const cpu = withRate(
      rates,
      `pod:${pod.attributes?.id ?? ""}`,
      linux.cpu,
      seen,
    );
    return { ...pod, linux: { ...linux, cpu, containers } };
  });
  rates.retain(seen);
  return out;
}
