/**
 * Pod DNS configuration (upstream `dns.Configurer.GetPodDNS`): the node's resolv.conf for
 * `Default` (and for `ClusterFirst` on the host network, or when no cluster DNS is configured,
 * as standalone kubelets run), cluster DNS with the cluster search path and `ndots:5` for
 * `ClusterFirst`, nothing for `None`; then `spec.dnsConfig` merged on top and the resolver's
 * limits applied. Pure: the caller reads the node's resolv.conf.
 *
 * @module
 */

import type { Pod } from "../types.ts";

/** A parsed resolv.conf, or the DNS settings of a pod (CRI `DNSConfig`). */
export interface DnsConfigShape {
  servers: string[];
  searches: string[];
  options: string[];
}

/** DNS inputs of the kubelet (config `clusterDNS`, `clusterDomain`, the node's resolv.conf). */
export interface DnsOptions {
  clusterDNS?: string[];
  clusterDomain?: string;
  /**
   * The node's resolv.conf (`resolvConf`), parsed with {@linkcode parseResolvConf}; absent when
   * `resolvConf` is "", which turns host DNS into "the local resolver" as upstream does.
   */
  host?: DnsConfigShape;
  /** Node addresses: with `resolvConf` "", one loopback server per address family. */
  nodeIPs?: string[];
}

/** Resolver limits (upstream validation: 3 servers; 32 search paths, 2048 characters). */
const MAX_SERVERS = 3;
const MAX_SEARCHES = 32;
const MAX_SEARCH_CHARS = 2048;
const MAX_SEARCH_LENGTH = 253;

/**
 * Parses resolv.conf text like upstream `parseResolvConf`: `nameserver` lines add up, the last
 * `search` and `options` lines win, search domains lose a trailing dot and a lone "." is
 * dropped, lines starting with "#" are comments.
 */
export function parseResolvConf(text: string): DnsConfigShape {
  const out: DnsConfigShape = { servers: [], searches: [], options: [] };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("#")) continue;
    const [key, ...rest] = line.split(/\s+/).filter((f) => f !== "");
    if (key === "nameserver" && rest[0]) out.servers.push(rest[0]);
    else if (key === "search") {
      out.searches = rest.filter((s) => s !== ".").map((s) =>
        s.endsWith(".") ? s.slice(0, -1) : s
      );
    } else if (key === "options") out.options = rest;
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
  for (const o of base) {
    const i = o.indexOf(":");
    byName.set(i === -1 ? o : o.slice(0, i), i === -1 ? "" : o.slice(i + 1));
  }
  for (const o of extra) byName.set(o.name, o.value ?? "");
  return [...byName].map(([name, value]) => value ? `${name}:${value}` : name);
}

/** Upstream `formDNSSearchFitsLimits`: at most 32 paths of ≤ 253 characters, 2048 in all. */
function fitSearches(searches: string[]): string[] {
  const kept = searches.slice(0, MAX_SEARCHES).filter((s) =>
    s.length <= MAX_SEARCH_LENGTH
  );
  while (kept.length > 0 && kept.join(" ").length > MAX_SEARCH_CHARS) {
    kept.pop();
  }
  return kept;
}

/** Which DNS a pod gets (upstream `getPodDNSType`). */
function podDnsType(pod: Pod): "cluster" | "host" | "none" {
  switch (pod.spec.dnsPolicy) {
    case "None":
      return "none";
    case "ClusterFirstWithHostNet":
      return "cluster";
    case "Default":
      return "host";
    default:
      // ClusterFirst, and an unknown policy as upstream falls back to it
      return pod.spec.hostNetwork ? "host" : "cluster";
  }
}

/**
 * True when `pod` asks for cluster DNS but the kubelet has no `clusterDNS`: upstream then
 * falls back to the host's resolver and records `MissingClusterDNS` on the node and the pod.
 */
export function missingClusterDns(pod: Pod, options: DnsOptions): boolean {
  return podDnsType(pod) === "cluster" && !options.clusterDNS?.length;
}

/** The message of the `MissingClusterDNS` events (the pod's carries a `pod: "..."` prefix). */
export const MISSING_CLUSTER_DNS_MESSAGE =
  'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';

/** The CRI DNS config for `pod`; always a value, as upstream always sends one. */
export function dnsConfigForPod(
  pod: Pod,
  options: DnsOptions,
): DnsConfigShape {
  const host = options.host;
  let result: DnsConfigShape = {
    servers: [...(host?.servers ?? [])],
    searches: [...(host?.searches ?? [])],
    options: [...(host?.options ?? [])],
  };
  const type = podDnsType(pod);
  const clusterDNS = options.clusterDNS ?? [];
  if (type === "none") {
    result = { servers: [], searches: [], options: [] };
  } else if (type === "cluster" && clusterDNS.length > 0) {
    const domain = options.clusterDomain ?? "";
    const ns = pod.metadata.namespace ?? "default";
    result = {
      servers: [...clusterDNS],
      searches: domain === "" ? result.searches : unique([
        `${ns}.svc.${domain}`,
        `svc.${domain}`,
        domain,
        ...result.searches,
      ]),
      options: ["ndots:5"],
    };
  } else if (host === undefined) {
    // resolvConf "": the local resolver, one loopback per node address family
    const families = (options.nodeIPs ?? []).map((ip) =>
      ip.includes(":") ? "::1" : "127.0.0.1"
    );
    result.servers = families.length > 0 ? families : ["127.0.0.1"];
    result.searches = ["."];
  }
  const extra = pod.spec.dnsConfig;
  if (extra) {
    result.servers = unique([...result.servers, ...(extra.nameservers ?? [])]);
    result.searches = unique([...result.searches, ...(extra.searches ?? [])]);
    result.options = mergeOptions(result.options, extra.options ?? []);
  }
  result.servers = result.servers.slice(0, MAX_SERVERS);
  result.searches = fitSearches(result.searches);
  return result;
}
