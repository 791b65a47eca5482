/**
 * Minimal pod DNS configuration (kubelet's `GetPodDNS`): host resolv.conf for `Default` (and for
 * `ClusterFirst` when no cluster DNS is configured, as standalone kubelets run), cluster DNS with
 * the usual search path and `ndots:5` for `ClusterFirst`, and `spec.dnsConfig` merged on top.
 *
 * @module
 */

import type { Pod } from "./types.ts";

/** A parsed resolv.conf, or DNS inputs for a pod. */
export interface DnsConfigShape {
  servers: string[];
  searches: string[];
  options: string[];
}

/** DNS inputs of the kubelet (config `clusterDNS`, `clusterDomain`, parsed `resolvConf`). */
export interface DnsOptions {
  clusterDNS?: string[];
  clusterDomain?: string;
  /** The node's resolv.conf, parsed (see {@linkcode parseResolvConf}). */
  host?: DnsConfigShape;
}

/** Parses resolv.conf text (nameserver/search/domain/options lines). */
export function parseResolvConf(text: string): DnsConfigShape {
  const out: DnsConfigShape = { servers: [], searches: [], options: [] };
  for (const raw of text.split("\n")) {
    const line = raw.replace(/[#;].*$/, "").trim();
    if (!line) continue;
    const [key, ...rest] = line.split(/\s+/);
    if (key === "nameserver" && rest[0]) out.servers.push(rest[0]);
    else if (key === "search") out.searches = rest;
    else if (key === "domain" && rest[0]) out.searches = [rest[0]];
    else if (key === "options") out.options.push(...rest);
  }
  return out;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function mergeOptions(
  base: string[],
  extra: { name: string; value?: string }[],
): string[] {
  const byName = new Map<string, string>();
  for (const o of base) byName.set(o.split(":")[0]!, o);
  for (const o of extra) {
    byName.set(o.name, o.value !== undefined ? `${o.name}:${o.value}` : o.name);
  }
  return [...byName.values()];
}

/** The CRI DNS config for `pod`, or undefined when there is nothing to send. */
export function dnsConfigForPod(
  pod: Pod,
  options: DnsOptions,
): DnsConfigShape | undefined {
  const policy = pod.spec.dnsPolicy ?? "ClusterFirst";
  const host = options.host ?? { servers: [], searches: [], options: [] };
  const clusterDNS = options.clusterDNS ?? [];
  let result: DnsConfigShape;
  const useCluster = clusterDNS.length > 0 &&
    (policy === "ClusterFirstWithHostNet" ||
      (policy === "ClusterFirst" && !pod.spec.hostNetwork));
  if (policy === "None") {
    result = { servers: [], searches: [], options: [] };
  } else if (useCluster) {
    const domain = options.clusterDomain ?? "cluster.local";
    const ns = pod.metadata.namespace ?? "default";
    result = {
      servers: [...clusterDNS],
      searches: unique([
        `${ns}.svc.${domain}`,
        `svc.${domain}`,
        domain,
        ...host.searches,
      ]),
      options: ["ndots:5"],
    };
  } else {
    result = {
      servers: [...host.servers],
      searches: [...host.searches],
      options: [...host.options],
    };
  }
  const extra = pod.spec.dnsConfig;
  if (extra) {
    result.servers = unique([...result.servers, ...(extra.nameservers ?? [])]);
    result.searches = unique([...result.searches, ...(extra.searches ?? [])]);
    result.options = mergeOptions(result.options, extra.options ?? []);
  }
  const empty =
    result.servers.length + result.searches.length + result.options.length ===
      0;
  return empty ? undefined : result;
}
