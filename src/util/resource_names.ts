/**
 * Kinds of resource names (upstream `v1helper`): native ones (no domain, or the kubernetes.io
 * domain), extended ones (any other domain, e.g. `example.com/foo`) and the scalar ones the
 * scheduler counts in whole units next to cpu, memory and ephemeral storage.
 * @module
 */

const NATIVE_DOMAIN = "kubernetes.io/";

/** Upstream `IsExtendedResourceName`: a domain-prefixed name outside kubernetes.io. */
export function isExtendedResourceName(name: string): boolean {
  return name.includes("/") && !name.includes(NATIVE_DOMAIN) &&
    !name.startsWith("requests.");
}

/** Upstream `IsScalarResourceName`: extended, hugepages, kubernetes.io-prefixed, attachable volumes. */
export function isScalarResourceName(name: string): boolean {
  return isExtendedResourceName(name) || name.startsWith("hugepages-") ||
    name.includes(NATIVE_DOMAIN) || name.startsWith("attachable-volumes-");
}
