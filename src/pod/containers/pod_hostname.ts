/**
 * The host name a pod's sandbox gets (upstream `GeneratePodHostNameAndDomain` in
 * kubelet_pods.go and `GetNodenameForKernel` in kubelet/util): `spec.hostname` or the pod
 * name, cut to 63 characters; with `setHostnameAsFQDN` and a subdomain, the whole
 * `<host>.<subdomain>.<namespace>.svc.<clusterDomain>`, which must fit the kernel's 64-byte
 * node name.
 *
 * @module
 */

import type { Pod } from "../types.ts";

/** The longest FQDN the kernel's node name field holds. */
export const FQDN_MAX_LENGTH = 64;

/** The pod's short host name and its domain ("" without a subdomain). */
export function podHostNameAndDomain(
  pod: Pod,
  clusterDomain: string,
): { hostname: string; domain: string } {
  let hostname = pod.spec.hostname || pod.metadata.name || "";
  if (hostname.length > 63) {
    hostname = hostname.slice(0, 63).replace(/[-.]+$/, "");
  }
  const sub = pod.spec.subdomain;
  const ns = pod.metadata.namespace ?? "default";
  return { hostname, domain: sub ? `${sub}.${ns}.svc.${clusterDomain}` : "" };
}

/**
 * The sandbox's host name; "" for a host-network pod (the runtime keeps the node's).
 * @throws {RangeError} when the FQDN asked for is longer than {@linkcode FQDN_MAX_LENGTH}.
 */
export function sandboxHostname(pod: Pod, clusterDomain: string): string {
  if (pod.spec.hostNetwork) return "";
  const { hostname, domain } = podHostNameAndDomain(pod, clusterDomain);
  if (!domain || pod.spec.setHostnameAsFQDN !== true) return hostname;
  const fqdn = `${hostname}.${domain}`;
  // the byte count, as upstream's len(): a multi-byte name must fit the kernel field too
  const length = new TextEncoder().encode(fqdn).length;
  if (length > FQDN_MAX_LENGTH) {
    throw new RangeError(
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${FQDN_MAX_LENGTH} characters is the max, ${length} characters requested)`,
    );
  }
  return fqdn;
}
