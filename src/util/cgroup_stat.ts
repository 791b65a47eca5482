/**
 * Reading the flat `key value` files of cgroups and `/proc` (`memory.stat`, `cpu.stat`,
 * `/proc/meminfo`), and cAdvisor's working-set rule, shared by every reader of node and pod
 * usage so that eviction and the stats endpoints see one figure.
 *
 * @module
 */

/** The value of `key` in a `key value` or `Key: value kB` file (`kB` → bytes). */
export function statValue(text: string, key: string): number | undefined {
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Za-z_()0-9]+):?\s+(\d+)(\s*kB)?\s*$/.exec(line);
    if (m && m[1] === key) return Number(m[2]) * (m[3] ? 1024 : 1);
  }
  return undefined;
}

/** cAdvisor's working set: usage less inactive file pages, never below 0. */
export function workingSet(
  usageBytes: number,
  inactiveFileBytes: number,
): number {
  return Math.max(0, usageBytes - inactiveFileBytes);
}
