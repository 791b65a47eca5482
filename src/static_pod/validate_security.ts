/**
 * Upstream's security checks of a pod (`pkg/apis/core/validation`): the pod's security context
 * (`validatePodSpecSecurityContext`, sysctls), each container's (`ValidateSecurityContext`), user
 * namespaces (`validateHostUsers`), Windows host-process pods, and the per-OS rules once
 * `spec.os` names one (`validateLinux`, `validateWindows`). Texts and paths are upstream's.
 *
 * @module
 */

import { Errors, type Json, list, obj, set, str } from "./field_errors.ts";
import { dns1123SubdomainErrors } from "../util/k8s_names.ts";
import { normalizeSysctlName } from "../util/sysctl_name.ts";

const MAX_ID = 2147483647;
const RANGE = `must be between 0 and ${MAX_ID}, inclusive`;

/** Upstream `IsValidUserID` / `IsValidGroupID`. */
function idRange(errs: Errors, field: string, value: unknown): void {
  if (typeof value !== "number") return;
  if (value < 0 || value > MAX_ID) errs.invalid(field, value, RANGE);
}

/** Each container of the pod with its path, init containers first (upstream `VisitContainersWithPath`). */
export function containersWithPath(spec: Json): [Json, string][] {
  const out: [Json, string][] = [];
  for (const key of ["initContainers", "containers", "ephemeralContainers"]) {
    list(spec[key]).forEach((c, i) => out.push([c, `spec.${key}[${i}]`]));
  }
  return out;
}

/** Upstream `validateLocalDescendingPath`. */
function localDescendingPath(errs: Errors, field: string, path: string): void {
  if (path.startsWith("/")) {
    errs.invalid(field, path, "must be a relative path");
  }
  if (path.split("/").includes("..")) {
    errs.invalid(field, path, "must not contain '..'");
  }
}

const SECCOMP_TYPES = ["Localhost", "RuntimeDefault", "Unconfined"];

/** Upstream `validateSeccompProfileField`. */
function seccompProfile(errs: Errors, profile: unknown, path: string): void {
  const sp = obj(profile);
  if (!sp) return;
  const type = str(sp.type);
  if (!type) {
    errs.required(
      `${path}.type`,
      "type is required when seccompProfile is set",
    );
  } else if (!SECCOMP_TYPES.includes(type)) {
    errs.notSupported(`${path}.type`, type, SECCOMP_TYPES);
  }
  if (type === "Localhost") {
    if (!set(sp.localhostProfile)) {
      errs.required(
        `${path}.localhostProfile`,
        "must be set when seccomp type is Localhost",
      );
    } else {
      localDescendingPath(
        errs,
        `${path}.localhostProfile`,
        str(sp.localhostProfile),
      );
    }
  } else if (set(sp.localhostProfile)) {
    errs.invalid(
      `${path}.localhostProfile`,
      sp,
      "can only be set when seccomp type is Localhost",
    );
  }
}

/** Upstream `ValidateAppArmorProfileField`. */
function appArmorProfile(errs: Errors, profile: unknown, path: string): void {
  const p = obj(profile);
  if (!p) return;
  const type = str(p.type);
  const local = p.localhostProfile;
  if (type === "Localhost") {
    if (!set(local)) {
      errs.required(
        `${path}.localhostProfile`,
        "must be set when AppArmor type is Localhost",
      );
      return;
    }
    const text = str(local);
    if (text.trim() !== text) {
      errs.invalid(
        `${path}.localhostProfile`,
        text,
        "must not be padded with whitespace",
      );
    } else if (text === "") {
      errs.required(
        `${path}.localhostProfile`,
        "must be set when AppArmor type is Localhost",
      );
    }
    if (new TextEncoder().encode(text).length > 4095) {
      errs.tooLong(`${path}.localhostProfile`, 4095);
    }
  } else if (type === "RuntimeDefault" || type === "Unconfined") {
    if (set(local)) {
      errs.invalid(
        `${path}.localhostProfile`,
        local,
        "can only be set when AppArmor type is Localhost",
      );
    }
  } else if (type === "") {
    errs.required(
      `${path}.type`,
      "type is required when appArmorProfile is set",
    );
  } else {
    errs.notSupported(`${path}.type`, type, SECCOMP_TYPES);
  }
}

// deno-lint-ignore no-control-regex -- Go's [[:cntrl:]] is exactly these
const CONTROL = /[\x00-\x1f\x7f]/;
const NETBIOS = /^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/;
const WINDOWS_DNS =
  /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const BAD_USER_CHARS = /["/\\:;|=,+*?<>@[\]]/;

/** Upstream `validateWindowsSecurityContextOptions`. */
function windowsOptions(errs: Errors, options: unknown, path: string): void {
  const w = obj(options);
  if (!w) return;
  if (set(w.gmsaCredentialSpecName)) {
    const name = str(w.gmsaCredentialSpecName);
    for (const m of dns1123SubdomainErrors(name)) {
      errs.invalid(`${path}.gmsaCredentialSpecName`, name, m);
    }
  }
  if (set(w.gmsaCredentialSpec)) {
    const spec = str(w.gmsaCredentialSpec);
    const size = new TextEncoder().encode(spec).length;
    if (size === 0) {
      errs.invalid(
        `${path}.gmsaCredentialSpec`,
        spec,
        "gmsaCredentialSpec cannot be an empty string",
      );
    } else if (size > 64 * 1024) {
      errs.invalid(
        `${path}.gmsaCredentialSpec`,
        spec,
        "gmsaCredentialSpec size must be under 64 KiB",
      );
    }
  }
  if (!set(w.runAsUserName)) return;
  const name = str(w.runAsUserName);
  const at = `${path}.runAsUserName`;
  const parts = name.split("\\");
  if (name === "") {
    errs.invalid(at, name, "runAsUserName cannot be an empty string");
  } else if (CONTROL.test(name)) {
    errs.invalid(at, name, "runAsUserName cannot contain control characters");
  } else if (parts.length > 2) {
    errs.invalid(
      at,
      name,
      "runAsUserName cannot contain more than one backslash",
    );
  } else {
    const domain = parts.length === 2 ? parts[0]! : "";
    const user = parts.length === 2 ? parts[1]! : parts[0]!;
    if (new TextEncoder().encode(domain).length >= 256) {
      errs.invalid(
        at,
        name,
        "runAsUserName's Domain length must be under 256 characters",
      );
    }
    if (
      parts.length === 2 && !(NETBIOS.test(domain) || WINDOWS_DNS.test(domain))
    ) {
      errs.invalid(
        at,
        name,
        "runAsUserName's Domain doesn't match the NetBios nor the DNS format",
      );
    }
    const userBytes = new TextEncoder().encode(user).length;
    if (userBytes === 0) {
      errs.invalid(at, name, "runAsUserName's User cannot be empty");
    } else if (userBytes > 104) {
      errs.invalid(
        at,
        name,
        "runAsUserName's User length must not be longer than 104 characters",
      );
    }
    if (/^[. ]+$/.test(user)) {
      errs.invalid(
        at,
        name,
        "runAsUserName's User cannot contain only periods or spaces",
      );
    }
    if (BAD_USER_CHARS.test(user)) {
      errs.invalid(
        at,
        name,
        `runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]`,
      );
    }
  }
}

const SYSCTL_FMT =
  "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";
const SYSCTL = new RegExp(SYSCTL_FMT);
const IPC_SYSCTLS = new Set([
  "kernel.sem",
  "kernel.shmall",
  "kernel.shmmax",
  "kernel.shmmni",
  "kernel.shm_rmid_forced",
  "kernel.shm",
  "kernel.msgmax",
  "kernel.msgmnb",
  "kernel.msgmni",
  "kernel.msg",
]);

/** Upstream `GetNamespace` (component-helpers `node/util/sysctl`): the namespace of a sysctl. */
function sysctlNamespace(name: string): "net" | "ipc" | "" {
  let n = normalizeSysctlName(name);
  const star = n.indexOf("*");
  if (star >= 0) n = n.slice(0, star);
  if (IPC_SYSCTLS.has(n)) return "ipc";
  if (n.startsWith("net.")) return "net";
  if (n.startsWith("fs.mqueue.")) return "ipc";
  return "";
}

/** Upstream `validateSysctls` (namespaced sysctls refused with host namespaces). */
function sysctls(errs: Errors, spec: Json, items: Json[], path: string): void {
  const names = new Set<string>();
  items.forEach((s, i) => {
    const name = str(s.name);
    const at = `${path}[${i}].name`;
    if (!name) errs.required(at);
    else if (
      new TextEncoder().encode(name).length > 253 || !SYSCTL.test(name)
    ) {
      errs.invalid(
        at,
        name,
        `must have at most 253 characters and match regex ${SYSCTL_FMT}`,
      );
    } else if (names.has(name)) errs.duplicate(at, name);
    const ns = sysctlNamespace(name);
    if (spec.hostNetwork === true && ns === "net") {
      errs.invalid(at, name, "may not be specified when 'hostNetwork' is true");
    } else if (spec.hostIPC === true && ns === "ipc") {
      errs.invalid(at, name, "may not be specified when 'hostIPC' is true");
    }
    names.add(name);
  });
}

const FS_GROUP_CHANGE = ["Always", "OnRootMismatch"];
const SUPPLEMENTAL_POLICIES = ["Merge", "Strict"];
const SELINUX_CHANGE = ["MountOption", "Recursive"];

/** Upstream `validatePodSpecSecurityContext`. */
export function validatePodSecurityContext(spec: Json, errs: Errors): void {
  const sc = obj(spec.securityContext) ?? {};
  const path = "spec.securityContext";
  idRange(errs, `${path}.fsGroup`, sc.fsGroup);
  idRange(errs, `${path}.runAsUser`, sc.runAsUser);
  idRange(errs, `${path}.runAsGroup`, sc.runAsGroup);
  (Array.isArray(sc.supplementalGroups) ? sc.supplementalGroups : []).forEach(
    (g, i) => idRange(errs, `${path}.supplementalGroups[${i}]`, g),
  );
  if (spec.shareProcessNamespace === true && spec.hostPID === true) {
    errs.invalid(
      `${path}.shareProcessNamespace`,
      true,
      "ShareProcessNamespace and HostPID cannot both be enabled",
    );
  }
  const items = list(sc.sysctls);
  if (items.length) sysctls(errs, spec, items, `${path}.sysctls`);
  if (set(sc.fsGroupChangePolicy)) {
    const p = str(sc.fsGroupChangePolicy);
    if (!FS_GROUP_CHANGE.includes(p)) {
      errs.notSupported(`${path}.fsGroupChangePolicy`, p, FS_GROUP_CHANGE);
    }
  }
  seccompProfile(errs, sc.seccompProfile, `${path}.seccompProfile`);
  windowsOptions(errs, sc.windowsOptions, `${path}.windowsOptions`);
  appArmorProfile(errs, sc.appArmorProfile, `${path}.appArmorProfile`);
  if (set(sc.supplementalGroupsPolicy)) {
    const p = str(sc.supplementalGroupsPolicy);
    if (!SUPPLEMENTAL_POLICIES.includes(p)) {
      errs.notSupported(
        `${path}.supplementalGroupsPolicy`,
        p,
        SUPPLEMENTAL_POLICIES,
      );
    }
  }
  if (set(sc.seLinuxChangePolicy)) {
    const p = str(sc.seLinuxChangePolicy);
    if (!SELINUX_CHANGE.includes(p)) {
      errs.notSupported(`${path}.seLinuxChangePolicy`, p, SELINUX_CHANGE);
    }
  }
}

/** Whether the pod shares the host's user namespace (`hostUsers` unset or true). */
export function usesHostUsers(spec: Json): boolean {
  return spec.hostUsers !== false;
}

/** Upstream `ValidateSecurityContext` of one container (privileged allowed, as the kubelet sets). */
export function validateContainerSecurityContext(
  context: unknown,
  path: string,
  hostUsers: boolean,
  errs: Errors,
): void {
  const sc = obj(context);
  if (!sc) return;
  idRange(errs, `${path}.runAsUser`, sc.runAsUser);
  idRange(errs, `${path}.runAsGroup`, sc.runAsGroup);
  if (set(sc.procMount)) {
    const pm = str(sc.procMount);
    if (pm !== "Default" && pm !== "Unmasked") {
      errs.notSupported(`${path}.procMount`, pm, ["Default", "Unmasked"]);
    }
    if (hostUsers && pm === "Unmasked") {
      errs.invalid(
        `${path}.procMount`,
        pm,
        "`hostUsers` must be false to use `Unmasked`",
      );
    }
  }
  seccompProfile(errs, sc.seccompProfile, `${path}.seccompProfile`);
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true) {
      errs.invalid(
        path,
        sc,
        "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
      );
    }
    for (
      const cap of (obj(sc.capabilities)?.add as unknown[] | undefined) ?? []
    ) {
      if (cap === "CAP_SYS_ADMIN") {
        errs.invalid(
          path,
          sc,
          "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
        );
      }
    }
  }
  windowsOptions(errs, sc.windowsOptions, `${path}.windowsOptions`);
  appArmorProfile(errs, sc.appArmorProfile, `${path}.appArmorProfile`);
}

/** Upstream `validateWindowsHostProcessPod`. */
export function validateWindowsHostProcess(spec: Json, errs: Errors): void {
  const podValue = obj(obj(spec.securityContext)?.windowsOptions)?.hostProcess;
  const pod = typeof podValue === "boolean" ? podValue : undefined;
  let count = 0;
  let hostProcess = 0;
  for (const [c, path] of containersWithPath(spec)) {
    count++;
    const value = obj(obj(c.securityContext)?.windowsOptions)?.hostProcess;
    const mine = typeof value === "boolean" ? value : undefined;
    if (pod !== undefined && mine !== undefined && pod !== mine) {
      errs.invalid(
        `${path}.securityContext.windowsOptions.hostProcess`,
        mine,
        `pod hostProcess value must be identical if both are specified, was ${pod}`,
      );
    }
    if (mine === true || (mine === undefined && pod === true)) hostProcess++;
  }
  if (hostProcess === 0) return;
  if (hostProcess !== count) {
    errs.invalid(
      "spec",
      "",
      "If pod contains any hostProcess containers then all containers must be HostProcess containers",
    );
  }
  if (spec.hostNetwork !== true) {
    errs.invalid(
      "spec.hostNetwork",
      false,
      "hostNetwork must be true if pod contains any hostProcess containers",
    );
  }
}

/** Upstream `validateHostUsers`: no host namespaces, no block devices in a user namespace. */
export function validateHostUsers(spec: Json, errs: Errors): void {
  if (usesHostUsers(spec)) return;
  const when = "when `hostUsers` is false";
  if (spec.hostNetwork === true) errs.forbidden("spec.hostNetwork", when);
  if (spec.hostPID === true) errs.forbidden("spec.HostPID", when);
  if (spec.hostIPC === true) errs.forbidden("spec.HostIPC", when);
  for (const [c, path] of containersWithPath(spec)) {
    if (list(c.volumeDevices).length > 0) {
      errs.forbidden(`${path}.volumeDevices`, when);
    }
  }
}

const WINDOWS_POD = "cannot be set for a windows pod";

/** Upstream `validateLinux` / `validateWindows`, run once `spec.os.name` is valid. */
export function validateForOs(spec: Json, os: string, errs: Errors): void {
  const sc = obj(spec.securityContext) ?? {};
  if (os === "linux") {
    const linux = "windows options cannot be set for a linux pod";
    if (set(sc.windowsOptions)) {
      errs.forbidden("spec.securityContext.windowsOptions", linux);
    }
    for (const [c, path] of containersWithPath(spec)) {
      if (set(obj(c.securityContext)?.windowsOptions)) {
        errs.forbidden(`${path}.securityContext.windowsOptions`, linux);
      }
    }
    return;
  }
  const at = "spec.securityContext";
  if (set(sc.appArmorProfile)) {
    errs.forbidden(`${at}.appArmorProfile`, WINDOWS_POD);
  }
  if (set(sc.seLinuxOptions)) {
    errs.forbidden(`${at}.seLinuxOptions`, WINDOWS_POD);
  }
  if (set(spec.hostUsers)) errs.forbidden("spec.hostUsers", WINDOWS_POD);
  if (spec.hostPID === true) errs.forbidden("spec.hostPID", WINDOWS_POD);
  if (spec.hostIPC === true) errs.forbidden("spec.hostIPC", WINDOWS_POD);
  if (set(sc.seccompProfile)) {
    errs.forbidden(`${at}.seccompProfile`, WINDOWS_POD);
  }
  if (set(sc.fsGroup)) errs.forbidden(`${at}.fsGroup`, WINDOWS_POD);
  if (set(sc.fsGroupChangePolicy)) {
    errs.forbidden(`${at}.fsGroupChangePolicy`, WINDOWS_POD);
  }
  if (list(sc.sysctls).length > 0) errs.forbidden(`${at}.sysctls`, WINDOWS_POD);
  if (set(spec.shareProcessNamespace)) {
    errs.forbidden("spec.shareProcessNamespace", WINDOWS_POD);
  }
  if (set(sc.runAsUser)) errs.forbidden(`${at}.runAsUser`, WINDOWS_POD);
  if (set(sc.runAsGroup)) errs.forbidden(`${at}.runAsGroup`, WINDOWS_POD);
  if (set(sc.supplementalGroups)) {
    errs.forbidden(`${at}.supplementalGroups`, WINDOWS_POD);
  }
  if (set(sc.supplementalGroupsPolicy)) {
    errs.forbidden(`${at}.supplementalGroupsPolicy`, WINDOWS_POD);
  }
  if (set(sc.seLinuxChangePolicy)) {
    errs.forbidden(`${at}.seLinuxChangePolicy`, WINDOWS_POD);
  }
  for (const [c, path] of containersWithPath(spec)) {
    const csc = obj(c.securityContext);
    if (!csc) continue;
    for (
      const key of [
        "appArmorProfile",
        "seLinuxOptions",
        "seccompProfile",
        "capabilities",
        "readOnlyRootFilesystem",
        "privileged",
        "allowPrivilegeEscalation",
        "procMount",
        "runAsUser",
        "runAsGroup",
      ]
    ) {
      if (set(csc[key])) {
        errs.forbidden(`${path}.securityContext.${key}`, WINDOWS_POD);
      }
    }
  }
}
