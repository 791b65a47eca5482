/**
 * Upstream `NormalizeName` (component-helpers `node/util/sysctl`): a sysctl written with `/`
 * separators (`net/ipv4/conf/eth0.100/x`) becomes the dotted form, a `.` inside it then standing
 * for a `/`. Shared by the kubelet's sysctl admission and the static pod validation.
 *
 * @module
 */

/** The dotted form of a sysctl name. */
export function normalizeSysctlName(name: string): string {
  const firstSeparator = name.search(/[./]/);
  if (firstSeparator < 0 || name[firstSeparator] !== "/") return name;
  return name.replace(/[./]/g, (c) => (c === "/" ? "." : "/"));
}
