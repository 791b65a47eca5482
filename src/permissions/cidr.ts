/**
 * Pod network ranges as Deno net grants. Deno 2.9 takes IPv4 CIDRs in
 * `--allow-net` (`10.88.0.0/16` covers every port of every address in it) but
 * rejects IPv6 ranges, so only IPv4 ranges can be granted.
 * @module
 */
import { PermissionPlanError } from "./errors.ts";

const IPV4_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/** An IPv4 range: its network address and prefix length. */
export interface Ipv4Range {
  network: number;
  prefix: number;
}

/** Parses `a.b.c.d/n`; undefined when it is not an IPv4 CIDR. */
export function parseIpv4Cidr(text: string): Ipv4Range | undefined {
  const m = IPV4_CIDR.exec(text.trim());
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  const prefix = Number(m[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return undefined;
  const address = octets.reduce((acc, o) => acc * 256 + o, 0);
  const size = 2 ** (32 - prefix);
  return { network: Math.floor(address / size) * size, prefix };
}

function dotted(value: number): string {
  const octets: number[] = [];
  for (let i = 3; i >= 0; i--) octets.push(Math.floor(value / 256 ** i) % 256);
  return octets.join(".");
}

/** `network/prefix` with the host bits cleared (the form Deno is given). */
export function formatCidr(range: Ipv4Range): string {
  return `${dotted(range.network)}/${range.prefix}`;
}

/** The first and last address of a range (what the startup check asks Deno about). */
export function rangeEnds(range: Ipv4Range): [string, string] {
  const last = range.network + 2 ** (32 - range.prefix) - 1;
  return [dotted(range.network), dotted(last)];
}

/**
 * The net grants for a `podCIDR` value (one range or a comma-separated list,
 * as `--pod-cidr` takes for dual-stack). IPv6 ranges are left out: Deno cannot
 * scope them, and probes to such pods report a NotCapable warning instead.
 * @throws {PermissionPlanError} for an entry that is not a CIDR.
 */
export function podNetworkGrants(value: string | undefined): string[] {
  if (!value?.trim()) return [];
  const grants: string[] = [];
  for (const entry of value.split(",").map((e) => e.trim())) {
    const range = parseIpv4Cidr(entry);
    if (range) {
      grants.push(formatCidr(range));
    } else if (
      !/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(entry) || !entry.includes(":")
    ) {
      throw new PermissionPlanError(
        "podCIDR",
        `"${entry}" is not a CIDR; use e.g. "10.244.0.0/16" (comma-separate several)`,
      );
    }
  }
  return grants;
}
