/**
 * Upstream's checks of a pod's name resolution (`pkg/apis/core/validation`): `dnsConfig`
 * (`validatePodDNSConfig`), `hostAliases` (`ValidateHostAliases`) and `hostnameOverride`
 * (`validatePodHostName`). Texts and paths are upstream's.
 *
 * @module
 */

import {
  dnsSubdomain,
  Errors,
  type Json,
  list,
  obj,
  set,
  str,
  strings,
} from "./field_errors.ts";
import { isSloppyIP } from "../util/sloppy_ip.ts";

/** Upstream `IsValidIPForLegacyField` (StrictIPCIDRValidation is off in v1.34). */
function ipAddress(errs: Errors, field: string, value: string): void {
  if (!isSloppyIP(value)) {
    errs.invalid(
      field,
      value,
      "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    );
  }
}

/** Upstream `validatePodDNSConfig` (search paths as strict DNS subdomains). */
export function validateDnsConfig(spec: Json, errs: Errors): void {
  const config = obj(spec.dnsConfig);
  const path = "spec.dnsConfig";
  const nameservers = strings(config?.nameservers);
  if (str(spec.dnsPolicy) === "None") {
    if (!config) {
      errs.required(path, "must provide `dnsConfig` when `dnsPolicy` is None");
      return;
    }
    if (nameservers.length === 0) {
      errs.required(
        `${path}.nameservers`,
        "must provide at least one DNS nameserver when `dnsPolicy` is None",
      );
      return;
    }
  }
  if (!config) return;
  if (nameservers.length > 3) {
    errs.invalid(
      `${path}.nameservers`,
      nameservers,
      "must not have more than 3 nameservers",
    );
  }
  nameservers.forEach((ns, i) =>
    ipAddress(errs, `${path}.nameservers[${i}]`, ns)
  );
  const searches = strings(config.searches);
  if (searches.length > 32) {
    errs.invalid(
      `${path}.searches`,
      searches,
      "must not have more than 32 search paths",
    );
  }
  if (new TextEncoder().encode(searches.join(" ")).length > 2048) {
    errs.invalid(
      `${path}.searches`,
      searches,
      "must not have more than 2048 characters (including spaces) in the search list",
    );
  }
  searches.forEach((s, i) =>
    dnsSubdomain(
      errs,
      `${path}.searches[${i}]`,
      s.endsWith(".") ? s.slice(0, -1) : s,
    )
  );
  list(config.options).forEach((o, i) => {
    if (!str(o.name)) {
      errs.required(`${path}.options[${i}]`, "must not be empty");
    }
  });
}

/** Upstream `ValidateHostAliases`. */
export function validateHostAliases(spec: Json, errs: Errors): void {
  list(spec.hostAliases).forEach((alias, i) => {
    const at = `spec.hostAliases[${i}]`;
    ipAddress(errs, `${at}.ip`, str(alias.ip));
    strings(alias.hostnames).forEach((h, j) =>
      dnsSubdomain(errs, `${at}.hostnames[${j}]`, h)
    );
  });
}

/** Upstream `validatePodHostName`: the rules of `hostnameOverride`. */
export function validateHostnameOverride(spec: Json, errs: Errors): void {
  if (!set(spec.hostnameOverride)) return;
  const name = str(spec.hostnameOverride);
  const at = "spec.hostnameOverride";
  if (spec.setHostnameAsFQDN === true) {
    errs.forbidden(at, "may not be specified when setHostnameAsFQDN is true");
  }
  if (spec.hostNetwork === true) {
    errs.forbidden(at, "may not be specified when hostNetwork is true");
  }
  if (new TextEncoder().encode(name).length > 64) errs.tooLong(at, 64);
  dnsSubdomain(errs, at, name);
}
