/**
 * Upstream's resource checks of a pod (`pkg/apis/core/validation`): a container's requests,
 * limits and claims (`validateResourceRequirements`), the pod's resource claims, its overhead
 * and each container's resize policy. Texts and paths are upstream's.
 *
 * @module
 */

import { qualifiedNameErrors } from "../util/k8s_names.ts";
import { isExtendedResourceName } from "../util/resource_names.ts";
import {
  DecodedQuantity,
  type GoQuantity,
  goQuantityString,
  parseGoQuantity,
} from "./go_quantity.ts";
import {
  dnsLabel,
  dnsSubdomain,
  Errors,
  type Json,
  list,
  obj,
  set,
  str,
} from "./field_errors.ts";

const CONTAINER_RESOURCES = ["cpu", "memory", "ephemeral-storage"];
const OTHER_STANDARD_RESOURCES = [
  "pods",
  "services",
  "replicationcontrollers",
  "resourcequotas",
  "secrets",
  "configmaps",
  "persistentvolumeclaims",
  "storage",
  "requests.cpu",
  "requests.memory",
  "requests.storage",
  "requests.ephemeral-storage",
  "limits.cpu",
  "limits.memory",
  "limits.ephemeral-storage",
  "services.nodeports",
  "services.loadbalancers",
];

/** Upstream `IsIntegerResourceName`: counted resources and extended ones. */
const INTEGER_RESOURCES = [
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "configmaps",
  "persistentvolumeclaims",
  "services.nodeports",
  "services.loadbalancers",
];
const isIntegerResource = (name: string): boolean =>
  INTEGER_RESOURCES.includes(name) || isExtendedResourceName(name);
const isHugePages = (name: string) => name.startsWith("hugepages-");
const isNative = (name: string) =>
  !name.includes("/") || name.includes("kubernetes.io/");
const overcommitAllowed = (name: string) =>
  isNative(name) && !isHugePages(name);

/** Upstream `validateContainerResourceName`. */
function resourceNameErrors(name: string, field: string, errs: Errors): void {
  const before = errs.list.length;
  for (const m of qualifiedNameErrors(name)) errs.invalid(field, name, m);
  const qualified = errs.list.length === before;
  if (!name.includes("/")) {
    if (CONTAINER_RESOURCES.includes(name) || isHugePages(name)) return;
    if (qualified && !OTHER_STANDARD_RESOURCES.includes(name)) {
      errs.invalid(
        field,
        name,
        "must be a standard resource type or fully qualified",
      );
    }
    errs.invalid(field, name, "must be a standard resource for containers");
  } else if (!isNative(name) && !isExtendedResourceName(name)) {
    errs.invalid(
      field,
      name,
      "doesn't follow extended resource name standard",
    );
  }
}

/** The quantity's value as mantissa × 10^exponent. */
export function decimalOf(q: GoQuantity): { m: bigint; e: number } {
  return q.dec
    ? { m: q.dec.unscaled, e: -q.dec.scale }
    : { m: q.value, e: q.scale };
}

function quantityCompare(a: GoQuantity, b: GoQuantity): number {
  const x = decimalOf(a);
  const y = decimalOf(b);
  const e = Math.min(x.e, y.e);
  const xm = x.m * 10n ** BigInt(x.e - e);
  const ym = y.m * 10n ** BigInt(y.e - e);
  return xm < ym ? -1 : xm > ym ? 1 : 0;
}

/** `Quantity.ScaledValue(scale)`: rounded up (away from zero) to units of 10^scale. */
function scaledValue(q: GoQuantity, scale: number): bigint {
  const { m, e } = decimalOf(q);
  if (e >= scale) return m * 10n ** BigInt(e - scale);
  const d = 10n ** BigInt(scale - e);
  const r = m / d;
  return r * d === m ? r : m < 0n ? r - 1n : r + 1n;
}

/** Upstream `Quantity.MilliValue()`, wrapping on int64 overflow as its multiplications do. */
function milliValue(q: GoQuantity): bigint {
  if (q.dec) return BigInt.asIntN(64, scaledValue(q, -3));
  if (q.scale < -3) return scaledValue(q, -3);
  const by = q.scale + 3;
  if ([0, 1, 2, 3, 6, 9].includes(by)) {
    return BigInt.asIntN(64, q.value * 10n ** BigInt(by));
  }
  const exact = q.value * 10n ** BigInt(by);
  return BigInt.asIntN(64, exact) === exact ? exact : 0n;
}

/** Bytes of a `hugepages-<size>` name, or undefined. */
function hugePageSize(name: string): bigint | undefined {
  try {
    return scaledValue(parseGoQuantity(name.slice("hugepages-".length)), 0);
  } catch {
    return undefined;
  }
}

/** The claim names a container may use (upstream `gatherPodResourceClaimNames`). */
export function podClaimNames(spec: Json): Set<string> {
  return new Set(
    list(spec.resourceClaims).map((c) => str(c.name)).filter(Boolean),
  );
}

/** Upstream `validateResourceRequirements` with the container resource names. */
export function validateResources(
  res: Json,
  path: string,
  claimNames: Set<string>,
  errs: Errors,
): void {
  const limits = obj(res.limits) ?? {};
  const requests = obj(res.requests) ?? {};
  const text = (q: GoQuantity) => goQuantityString(q);
  let cpuOrMemory = false;
  let hugePages = false;
  const quantityValue = (name: string, q: GoQuantity, field: string) => {
    if (decimalOf(q).m < 0n) {
      errs.invalid(field, text(q), "must be greater than or equal to 0");
    }
    if (isIntegerResource(name) && milliValue(q) % 1000n !== 0n) {
      errs.invalid(field, text(q), "must be an integer");
    }
  };
  const hugePageValue = (name: string, q: GoQuantity, field: string) => {
    if (!isHugePages(name)) return;
    hugePages = true;
    const size = hugePageSize(name);
    if (size !== undefined && size > 0n && scaledValue(q, 0) % size !== 0n) {
      errs.invalid(
        field,
        text(q),
        `${text(q)} is not positive integer multiple of ${name}`,
      );
    }
  };
  for (const [name, raw] of Object.entries(limits)) {
    if (!(raw instanceof DecodedQuantity)) continue;
    const field = `${path}.limits[${name}]`;
    resourceNameErrors(name, field, errs);
    quantityValue(name, raw.q, field);
    hugePageValue(name, raw.q, field);
    if (name === "cpu" || name === "memory") cpuOrMemory = true;
  }
  for (const [name, raw] of Object.entries(requests)) {
    if (!(raw instanceof DecodedQuantity)) continue;
    const field = `${path}.requests[${name}]`;
    resourceNameErrors(name, field, errs);
    quantityValue(name, raw.q, field);
    const limit = limits[name];
    if (limit instanceof DecodedQuantity) {
      const cmp = quantityCompare(raw.q, limit.q);
      if (cmp !== 0 && !overcommitAllowed(name)) {
        errs.invalid(
          `${path}.requests`,
          text(raw.q),
          `must be equal to ${name} limit of ${text(limit.q)}`,
        );
      } else if (cmp > 0) {
        errs.invalid(
          `${path}.requests`,
          text(raw.q),
          `must be less than or equal to ${name} limit of ${text(limit.q)}`,
        );
      }
    } else if (!overcommitAllowed(name)) {
      errs.required(
        `${path}.limits`,
        "Limit must be set for non overcommitable resources",
      );
    }
    hugePageValue(name, raw.q, field);
    if (name === "cpu" || name === "memory") cpuOrMemory = true;
  }
  if (!cpuOrMemory && hugePages) {
    errs.forbidden(path, "HugePages require cpu or memory");
  }
  claimNameErrors(list(res.claims), claimNames, `${path}.claims`, errs);
}

/** Upstream `validateResourceClaimNames`: each claim once, and one of the pod's. */
function claimNameErrors(
  claims: Json[],
  podClaims: Set<string>,
  path: string,
  errs: Errors,
): void {
  const names = new Set<string>();
  claims.forEach((claim, i) => {
    const at = `${path}[${i}]`;
    const name = str(claim.name);
    if (!name) {
      errs.required(at);
      return;
    }
    if (names.has(name)) errs.duplicate(at, name);
    else {
      const request = str(claim.request);
      let key = name;
      if (request) {
        dnsLabel(errs, `${at}.request`, request);
        key += `/${request}`;
      }
      if (names.has(key)) errs.duplicate(at, key);
      else if (!request) {
        for (const k of names) {
          const slash = k.indexOf("/");
          if (slash >= 0 && k.slice(0, slash) === name) {
            errs.duplicate(at, name);
          }
        }
      }
      names.add(key);
    }
    if (!podClaims.has(name)) {
      errs.notFound(
        at,
        name,
        `must be one of the names in pod.spec.resourceClaims${
          podClaims.size === 0
            ? " which is empty"
            : `: ${[...podClaims].sort().join(", ")}`
        }`,
      );
    }
  });
}

/** Upstream `validatePodResourceClaims`. */
export function validatePodResourceClaims(spec: Json, errs: Errors): void {
  const seen = new Set<string>();
  list(spec.resourceClaims).forEach((claim, i) => {
    const at = `spec.resourceClaims[${i}]`;
    const name = str(claim.name);
    if (!name) errs.required(`${at}.name`);
    else if (seen.has(name)) errs.duplicate(`${at}.name`, name);
    else {
      dnsLabel(errs, `${at}.name`, name);
      seen.add(name);
    }
    const claimName = claim.resourceClaimName;
    const template = claim.resourceClaimTemplateName;
    if (set(claimName) && set(template)) {
      errs.invalid(
        at,
        claim,
        "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
      );
    }
    if (!set(claimName) && !set(template)) {
      errs.invalid(
        at,
        claim,
        "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
      );
    }
    if (set(claimName)) {
      dnsSubdomain(errs, `${at}.resourceClaimName`, str(claimName));
    }
    if (set(template)) {
      dnsSubdomain(errs, `${at}.resourceClaimTemplateName`, str(template));
    }
  });
}

/** Upstream `validateOverhead`: the limits rules over `spec.overhead`. */
export function validateOverhead(spec: Json, errs: Errors): void {
  if (!obj(spec.overhead)) return;
  validateResources(
    { limits: spec.overhead },
    "spec.overhead",
    new Set(),
    errs,
  );
}

const RESIZE_RESOURCES = ["cpu", "memory"];
const RESIZE_POLICIES = ["NotRequired", "RestartContainer"];

/** Upstream `validateResizePolicy`. */
export function validateResizePolicy(
  policies: Json[],
  path: string,
  podRestartPolicy: string,
  errs: Errors,
): void {
  const seen = new Set<string>();
  policies.forEach((p, i) => {
    const resource = str(p.resourceName);
    const policy = str(p.restartPolicy);
    if (seen.has(resource)) errs.duplicate(`${path}[${i}]`, resource);
    seen.add(resource);
    if (!resource) errs.required(path);
    else if (!RESIZE_RESOURCES.includes(resource)) {
      errs.notSupported(path, resource, RESIZE_RESOURCES);
    }
    if (!policy) errs.required(path);
    else if (!RESIZE_POLICIES.includes(policy)) {
      errs.notSupported(path, policy, RESIZE_POLICIES);
    }
    if (podRestartPolicy === "Never" && policy !== "NotRequired") {
      errs.invalid(
        path,
        policy,
        "must be 'NotRequired' when `restartPolicy` is 'Never'",
      );
    }
  });
}
