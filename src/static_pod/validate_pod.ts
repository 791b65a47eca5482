/**
 * Upstream `ValidatePodCreate` (`pkg/apis/core/validation`, default `PodValidationOptions`) for
 * the rules a static pod manifest can hit: metadata (names, labels, annotations), volumes,
 * containers (names, images, ports, env, mounts, pull and termination-message policies,
 * resources, probes), the pod's restart and DNS policies, host names, tolerations and the
 * other pod-level scalars. Each error carries upstream's type, field path and text.
 *
 * @module
 */

import { labelValueErrors, qualifiedNameErrors } from "../util/k8s_names.ts";
import { VOLUME_SOURCES } from "./volume_sources.ts";
import { DecodedQuantity } from "./go_quantity.ts";
import {
  decimalOf,
  podClaimNames,
  validateOverhead,
  validatePodResourceClaims,
  validateResizePolicy,
  validateResources,
} from "./validate_resources.ts";
import {
  dnsLabel,
  dnsSubdomain,
  Errors,
  type FieldError,
  type Json,
  list,
  obj,
  set,
  str,
  validateLabels,
} from "./field_errors.ts";
import {
  containersWithPath,
  usesHostUsers,
  validateContainerSecurityContext,
  validateForOs,
  validateHostUsers,
  validatePodSecurityContext,
  validateWindowsHostProcess,
} from "./validate_security.ts";
import {
  validateAffinity,
  validateReadinessGates,
  validateSchedulingGates,
  validateTopologySpread,
} from "./validate_scheduling.ts";
import {
  validateDnsConfig,
  validateHostAliases,
  validateHostnameOverride,
} from "./validate_network.ts";

export type { FieldError } from "./field_errors.ts";

/** The field errors of a defaulted static pod (empty when valid). */
export function validatePodCreate(pod: Json): FieldError[] {
  const errs = new Errors();
  validateMetadata(obj(pod.metadata) ?? {}, errs);
  validateSpec(obj(pod.spec) ?? {}, errs);
  return errs.list;
}

const encoder = new TextEncoder();

function validateMetadata(meta: Json, errs: Errors): void {
  const name = str(meta.name);
  if (!name) errs.required("metadata.name", "name or generateName is required");
  else dnsSubdomain(errs, "metadata.name", name);
  const namespace = str(meta.namespace);
  if (!namespace) errs.required("metadata.namespace");
  else dnsLabel(errs, "metadata.namespace", namespace);
  validateLabels(meta.labels, "metadata.labels", errs);
  let total = 0;
  for (const [k, v] of Object.entries(obj(meta.annotations) ?? {})) {
    for (const m of qualifiedNameErrors(k.toLowerCase())) {
      errs.invalid("metadata.annotations", k, m);
    }
    total += encoder.encode(k).length + encoder.encode(str(v)).length;
  }
  if (total > 256 * 1024) errs.tooLong("metadata.annotations", 256 * 1024);
}

const HOST_PATH_TYPES = [
  "",
  "DirectoryOrCreate",
  "Directory",
  "FileOrCreate",
  "File",
  "Socket",
  "CharDevice",
  "BlockDevice",
];

function validateVolumes(spec: Json, errs: Errors): Map<string, Json> {
  const names = new Map<string, Json>();
  list(spec.volumes).forEach((v, i) => {
    const path = `spec.volumes[${i}]`;
    const before = errs.list.length;
    const name = str(v.name);
    const sources = VOLUME_SOURCES.filter((k) => set(v[k]));
    if (sources.length === 0) {
      errs.required(path, "must specify a volume type");
    } else if (sources.length > 1) {
      errs.forbidden(
        `${path}.${sources[1]}`,
        "may not specify more than 1 volume type",
      );
    } else {
      const downward = obj(v.downwardAPI);
      for (const item of list(downward?.items)) {
        if (!str(item.path)) errs.required(`${path}.downwardAPI.path`);
        const refs = [item.fieldRef, item.resourceFieldRef].filter(set);
        if (refs.length !== 1) {
          errs.required(
            `${path}.downwardAPI`,
            "one of fieldRef and resourceFieldRef is required",
          );
        }
        const fieldRef = obj(item.fieldRef);
        const fieldPath = str(fieldRef?.fieldPath);
        if (fieldRef && !fieldPath) {
          errs.required(`${path}.downwardAPI.fieldRef.fieldPath`);
        } else if (fieldRef && !VOLUME_FIELD_PATHS.test(fieldPath)) {
          errs.invalid(
            `${path}.downwardAPI.fieldRef.fieldPath`,
            fieldPath,
            `error converting fieldPath: field label not supported: ${fieldPath}`,
          );
        }
      }
      const sizeLimit = obj(v.emptyDir)?.sizeLimit;
      if (
        sizeLimit instanceof DecodedQuantity && decimalOf(sizeLimit.q).m < 0n
      ) {
        errs.forbidden(
          `${path}.emptyDir.sizeLimit`,
          "SizeLimit field must be a valid resource quantity",
        );
      }
      const hostPath = obj(v.hostPath);
      if (hostPath) {
        const type = str(hostPath.type);
        if (!str(hostPath.path)) errs.required(`${path}.hostPath.path`);
        else if (!HOST_PATH_TYPES.includes(type)) {
          errs.notSupported(
            `${path}.hostPath.type`,
            type,
            HOST_PATH_TYPES.slice(1).concat([""]).sort(),
          );
        }
      }
    }
    if (!name) errs.required(`${path}.name`);
    else dnsLabel(errs, `${path}.name`, name);
    if (names.has(name)) errs.duplicate(`${path}.name`, name);
    // upstream only lists volumes without errors, so mounts of a bad one are "Not found"
    if (name && errs.list.length === before) names.set(name, v);
  });
  return names;
}

/** Upstream `validateHandler`: exactly one handler, each checked. */
function validateHandler(
  handler: Json,
  kinds: string[],
  path: string,
  errs: Errors,
): void {
  let count = 0;
  for (const kind of kinds) {
    const h = handler[kind];
    if (!set(h)) continue;
    if (count > 0) {
      errs.forbidden(
        `${path}.${kind}`,
        "may not specify more than 1 handler type",
      );
      continue;
    }
    count++;
    const action = obj(h) ?? {};
    const at = `${path}.${kind}`;
    if (kind === "exec") {
      if (!Array.isArray(action.command) || action.command.length === 0) {
        errs.required(`${at}.command`);
      }
    } else if (kind === "httpGet") {
      if (!str(action.path)) errs.required(`${at}.path`);
      portNumOrName(action.port ?? 0, `${at}.port`, errs);
      const scheme = str(action.scheme);
      if (scheme !== "HTTP" && scheme !== "HTTPS") {
        errs.notSupported(`${at}.scheme`, scheme, ["HTTP", "HTTPS"]);
      }
    } else if (kind === "tcpSocket") {
      portNumOrName(action.port ?? 0, `${at}.port`, errs);
    } else if (kind === "grpc") {
      const port = typeof action.port === "number" ? action.port : 0;
      if (port < 1 || port > 65535) {
        errs.invalid(
          `${at}.port`,
          port,
          "must be between 1 and 65535, inclusive",
        );
      }
    }
  }
  if (count === 0) errs.required(path, "must specify a handler type");
}

function validateProbe(
  probe: Json | undefined,
  path: string,
  errs: Errors,
  kind: "liveness" | "readiness" | "startup",
): void {
  if (!probe) return;
  validateHandler(probe, ["exec", "httpGet", "tcpSocket", "grpc"], path, errs);
  for (
    const k of [
      "initialDelaySeconds",
      "timeoutSeconds",
      "periodSeconds",
      "successThreshold",
      "failureThreshold",
    ]
  ) {
    const v = probe[k];
    if (typeof v === "number" && v < 0) {
      errs.invalid(`${path}.${k}`, v, "must be greater than or equal to 0");
    }
  }
  if (
    kind !== "readiness" && typeof probe.successThreshold === "number" &&
    probe.successThreshold !== 1
  ) {
    errs.invalid(
      `${path}.successThreshold`,
      probe.successThreshold,
      "must be 1",
    );
  }
  if (kind === "readiness" && set(probe.terminationGracePeriodSeconds)) {
    errs.invalid(
      `${path}.terminationGracePeriodSeconds`,
      probe.terminationGracePeriodSeconds,
      "must not be set for readinessProbes",
    );
  }
}

/** Upstream `IsValidPortName` (an IANA_SVC_NAME): its messages, empty when valid. */
function portNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name.length > 15) errors.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(name)) {
    errors.push(
      "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
    );
  }
  if (!/[a-z]/.test(name)) {
    errors.push("must contain at least one letter (a-z)");
  }
  if (name.includes("--")) {
    errors.push("must not contain consecutive hyphens");
  }
  if (name.startsWith("-") || name.endsWith("-")) {
    errors.push("must not begin or end with a hyphen");
  }
  return errors;
}

/** Upstream `ValidatePortNumOrName`. */
function portNumOrName(port: unknown, field: string, errs: Errors): void {
  if (typeof port === "number") {
    if (port < 1 || port > 65535) {
      errs.invalid(field, port, "must be between 1 and 65535, inclusive");
    }
  } else if (typeof port === "string") {
    for (const m of portNameErrors(port)) errs.invalid(field, port, m);
  }
}

const PROTOCOLS = ["SCTP", "TCP", "UDP"];
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];

/** What every container's checks need to know of its pod. */
interface PodContext {
  volumes: Map<string, Json>;
  claims: Set<string>;
  restartPolicy: string;
  hostUsers: boolean;
}

/** Upstream `validateContainerCommon`. */
function validateContainerCommon(
  c: Json,
  path: string,
  pod: PodContext,
  errs: Errors,
): void {
  const volumes = pod.volumes;
  const name = str(c.name);
  if (!name) errs.required(`${path}.name`);
  else dnsLabel(errs, `${path}.name`, name);
  if (!str(c.image)) errs.required(`${path}.image`);
  const tmp = str(c.terminationMessagePolicy);
  if (!tmp) errs.required(`${path}.terminationMessagePolicy`);
  else if (tmp !== "File" && tmp !== "FallbackToLogsOnError") {
    errs.notSupported(`${path}.terminationMessagePolicy`, tmp, [
      "File",
      "FallbackToLogsOnError",
    ]);
  }
  const portNames = new Set<string>();
  list(c.ports).forEach((p, i) => {
    const pp = `${path}.ports[${i}]`;
    const pname = str(p.name);
    if (pname) {
      const problems = portNameErrors(pname);
      for (const m of problems) errs.invalid(`${pp}.name`, pname, m);
      if (problems.length === 0) {
        if (portNames.has(pname)) errs.duplicate(`${pp}.name`, pname);
        else portNames.add(pname);
      }
    }
    const cp = typeof p.containerPort === "number" ? p.containerPort : 0;
    if (cp === 0) errs.required(`${pp}.containerPort`);
    else if (cp < 1 || cp > 65535) {
      errs.invalid(
        `${pp}.containerPort`,
        cp,
        "must be between 1 and 65535, inclusive",
      );
    }
    const hp = typeof p.hostPort === "number" ? p.hostPort : 0;
    if (hp !== 0 && (hp < 1 || hp > 65535)) {
      errs.invalid(
        `${pp}.hostPort`,
        hp,
        "must be between 1 and 65535, inclusive",
      );
    }
    const proto = str(p.protocol);
    if (!proto) errs.required(`${pp}.protocol`);
    else if (!PROTOCOLS.includes(proto)) {
      errs.notSupported(`${pp}.protocol`, proto, PROTOCOLS);
    }
  });
  list(c.env).forEach((e, i) => {
    const from = obj(e.valueFrom);
    if (from) {
      const sources = [
        "fieldRef",
        "resourceFieldRef",
        "configMapKeyRef",
        "secretKeyRef",
        "fileKeyRef",
      ].filter((k) => set(from[k]));
      if (sources.length === 0) {
        errs.invalid(
          `${path}.env[${i}].valueFrom`,
          "",
          "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        );
      }
      const fieldRef = obj(from.fieldRef);
      const fieldPath = str(fieldRef?.fieldPath);
      const at = `${path}.env[${i}].valueFrom.fieldRef.fieldPath`;
      if (fieldRef && !fieldPath) errs.required(at);
      else if (fieldRef && !ENV_FIELD_PATHS.test(fieldPath)) {
        errs.invalid(
          at,
          fieldPath,
          `error converting fieldPath: field label not supported: ${fieldPath}`,
        );
      }
    }
    const ename = str(e.name);
    if (!ename) errs.required(`${path}.env[${i}].name`);
    else if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(ename)) {
      errs.invalid(
        `${path}.env[${i}].name`,
        ename,
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
      );
    }
  });
  const mountPaths = new Set<string>();
  list(c.volumeMounts).forEach((m, i) => {
    const mp = `${path}.volumeMounts[${i}]`;
    const mname = str(m.name);
    if (!mname) errs.required(`${mp}.name`);
    if (!volumes.has(mname)) errs.notFound(`${mp}.name`, mname);
    const mountPath = str(m.mountPath);
    if (!mountPath) errs.required(`${mp}.mountPath`);
    else if (mountPaths.has(mountPath)) {
      errs.invalid(`${mp}.mountPath`, mountPath, "must be unique");
    }
    mountPaths.add(mountPath);
  });
  validateVolumeDevices(c, path, volumes, errs);
  const pull = str(c.imagePullPolicy);
  if (!pull) errs.required(`${path}.imagePullPolicy`);
  else if (!PULL_POLICIES.includes(pull)) {
    errs.notSupported(`${path}.imagePullPolicy`, pull, PULL_POLICIES);
  }
  validateResources(
    obj(c.resources) ?? {},
    `${path}.resources`,
    pod.claims,
    errs,
  );
  validateResizePolicy(
    list(c.resizePolicy),
    `${path}.resizePolicy`,
    pod.restartPolicy,
    errs,
  );
  validateContainerSecurityContext(
    c.securityContext,
    `${path}.securityContext`,
    pod.hostUsers,
    errs,
  );
}

/** Upstream `ValidateVolumeDevices`: block devices come from claims, apart from the mounts. */
function validateVolumeDevices(
  c: Json,
  path: string,
  volumes: Map<string, Json>,
  errs: Errors,
): void {
  const mounts = new Map(
    list(c.volumeMounts).map((m) => [str(m.name), str(m.mountPath)]),
  );
  const mountPaths = new Set(mounts.values());
  const paths = new Set<string>();
  const names = new Set<string>();
  list(c.volumeDevices).forEach((d, i) => {
    const at = `${path}.volumeDevices[${i}]`;
    const name = str(d.name);
    const devicePath = str(d.devicePath);
    const volume = volumes.get(name);
    if (!name) errs.required(`${at}.name`);
    if (names.has(name)) errs.invalid(`${at}.name`, name, "must be unique");
    if (
      volume && !set(volume.persistentVolumeClaim) && !set(volume.ephemeral)
    ) {
      errs.invalid(
        `${at}.name`,
        name,
        "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
      );
    }
    if (!volume) errs.notFound(`${at}.name`, name);
    if (!devicePath) errs.required(`${at}.devicePath`);
    if (paths.has(devicePath)) {
      errs.invalid(`${at}.devicePath`, devicePath, "must be unique");
    }
    if (devicePath && devicePath.split("/").includes("..")) {
      errs.invalid(
        `${at}.devicePath`,
        devicePath,
        "can not contain backsteps ('..')",
      );
    } else paths.add(devicePath);
    if (mounts.has(name)) {
      errs.invalid(
        `${at}.name`,
        name,
        "must not already exist in volumeMounts",
      );
    }
    if (mountPaths.has(devicePath)) {
      errs.invalid(
        `${at}.devicePath`,
        devicePath,
        "must not already exist as a path in volumeMounts",
      );
    }
    if (name) names.add(name);
  });
}

/** The lifecycle hooks and probes of a container that may have them. */
function validateLifecycleAndProbes(c: Json, path: string, errs: Errors): void {
  const lifecycle = obj(c.lifecycle);
  for (const hook of ["postStart", "preStop"]) {
    const h = obj(lifecycle?.[hook]);
    if (h) {
      validateHandler(
        h,
        ["exec", "httpGet", "tcpSocket", "sleep"],
        `${path}.lifecycle.${hook}`,
        errs,
      );
    }
  }
  validateProbe(
    obj(c.livenessProbe),
    `${path}.livenessProbe`,
    errs,
    "liveness",
  );
  validateProbe(
    obj(c.readinessProbe),
    `${path}.readinessProbe`,
    errs,
    "readiness",
  );
  validateProbe(obj(c.startupProbe), `${path}.startupProbe`, errs, "startup");
}

/** Upstream `validateContainers`. */
function validateContainers(spec: Json, pod: PodContext, errs: Errors): void {
  const containers = Array.isArray(spec.containers)
    ? list(spec.containers)
    : [];
  if (containers.length === 0) {
    errs.required("spec.containers");
    return;
  }
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const path = `spec.containers[${i}]`;
    validateContainerCommon(c, path, pod, errs);
    const name = str(c.name);
    if (names.has(name)) errs.duplicate(`${path}.name`, name);
    else names.add(name);
    validateLifecycleAndProbes(c, path, errs);
    if (set(c.restartPolicy)) {
      errs.forbidden(
        `${path}.restartPolicy`,
        "may not be set for non-init containers",
      );
    }
  });
  hostPortConflicts(containers, "spec.containers", errs);
}

const INIT_ONLY =
  "may not be set for init containers without restartPolicy=Always";

/** Upstream `validateInitContainers`. */
function validateInitContainers(
  spec: Json,
  pod: PodContext,
  errs: Errors,
): void {
  const names = new Set(list(spec.containers).map((c) => str(c.name)));
  list(spec.initContainers).forEach((c, i) => {
    const path = `spec.initContainers[${i}]`;
    validateContainerCommon(c, path, pod, errs);
    let sidecar = false;
    if (set(c.restartPolicy)) {
      const policy = str(c.restartPolicy);
      sidecar = policy === "Always";
      if (!sidecar) {
        errs.notSupported(`${path}.restartPolicy`, policy, ["Always"]);
      }
    }
    const name = str(c.name);
    if (names.has(name)) errs.duplicate(`${path}.name`, name);
    else if (name) names.add(name);
    hostPortConflicts([c], "spec.initContainers", errs);
    if (sidecar) validateLifecycleAndProbes(c, path, errs);
    else {
      for (
        const key of [
          "lifecycle",
          "livenessProbe",
          "readinessProbe",
          "startupProbe",
        ]
      ) {
        if (set(c[key])) errs.forbidden(`${path}.${key}`, INIT_ONLY);
      }
    }
    if (list(c.resizePolicy).length > 0) {
      errs.invalid(
        `${path}.resizePolicy`,
        c.resizePolicy,
        "must not be set for init containers",
      );
    }
  });
}

/** The fields an ephemeral container may not set, in upstream's struct order. */
const EPHEMERAL_FORBIDDEN = [
  "ports",
  "resources",
  "resizePolicy",
  "restartPolicy",
  "restartPolicyRules",
  "livenessProbe",
  "readinessProbe",
  "startupProbe",
  "lifecycle",
];

/** Whether a field holds a non-zero Go value (an empty struct or list is zero). */
function nonZero(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return true;
  const o = obj(value);
  if (o) {
    return Object.values(o).some((v) =>
      Array.isArray(v) ? v.length > 0 : nonZero(v)
    );
  }
  return true;
}

/** Upstream `validateEphemeralContainers`. */
function validateEphemeralContainers(
  spec: Json,
  pod: PodContext,
  errs: Errors,
): void {
  const others = new Set(
    [...list(spec.containers), ...list(spec.initContainers)].map((c) =>
      str(c.name)
    ),
  );
  const all = new Set(others);
  list(spec.ephemeralContainers).forEach((c, i) => {
    const path = `spec.ephemeralContainers[${i}]`;
    validateContainerCommon(c, path, pod, errs);
    imageWhitespace(c, path, errs);
    const name = str(c.name);
    if (all.has(name)) errs.duplicate(`${path}.name`, name);
    else all.add(name);
    const target = str(c.targetContainerName);
    if (target && !others.has(target)) {
      errs.notFound(`${path}.targetContainerName`, target);
    }
    for (const key of EPHEMERAL_FORBIDDEN) {
      const setHere = key === "resources" ? nonZero(c[key]) : set(c[key]);
      if (setHere) {
        errs.forbidden(
          `${path}.${key}`,
          "cannot be set for an Ephemeral Container",
        );
      }
    }
    list(c.volumeMounts).forEach((m, j) => {
      for (const key of ["subPath", "subPathExpr"]) {
        if (str(m[key])) {
          errs.forbidden(
            `${path}.volumeMounts[${j}].${key}`,
            "cannot be set for an Ephemeral Container",
          );
        }
      }
    });
  });
}

/** Upstream `validateContainerOnlyForPod`. */
function imageWhitespace(c: Json, path: string, errs: Errors): void {
  const image = str(c.image);
  if (image.trim() !== image) {
    errs.invalid(
      `${path}.image`,
      image,
      "must not have leading or trailing whitespace",
    );
  }
}

/** Upstream `ValidateTolerations`. */
function validateTolerations(tolerations: unknown, errs: Errors): void {
  list(tolerations).forEach((t, i) => {
    const path = `spec.tolerations[${i}]`;
    const key = str(t.key);
    const operator = str(t.operator);
    const value = str(t.value);
    const effect = str(t.effect);
    if (key) {
      for (const m of qualifiedNameErrors(key)) {
        errs.invalid(`${path}.key`, key, m);
      }
    }
    if (!key && operator !== "Exists") {
      errs.invalid(
        `${path}.operator`,
        operator,
        'operator must be Exists when `key` is empty, which means "match all values and all keys"',
      );
    }
    if (set(t.tolerationSeconds) && effect !== "NoExecute") {
      errs.invalid(
        `${path}.effect`,
        effect,
        "effect must be 'NoExecute' when `tolerationSeconds` is set",
      );
    }
    if (operator === "Equal" || operator === "") {
      const problems = labelValueErrors(value);
      if (problems.length) {
        errs.invalid(`${path}.operator`, value, problems.join(";"));
      }
    } else if (operator === "Exists") {
      if (value) {
        errs.invalid(
          `${path}.operator`,
          value,
          "value must be empty when `operator` is 'Exists'",
        );
      }
    } else {
      errs.notSupported(`${path}.operator`, operator, ["Equal", "Exists"]);
    }
    if (
      effect &&
      !["NoSchedule", "PreferNoSchedule", "NoExecute"].includes(effect)
    ) {
      errs.notSupported(`${path}.effect`, effect, [
        "NoExecute",
        "NoSchedule",
        "PreferNoSchedule",
      ]);
    }
  });
}

/** Upstream `checkHostPortConflicts` over one container list. */
function hostPortConflicts(
  containers: Json[],
  path: string,
  errs: Errors,
): void {
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    list(c.ports).forEach((p, j) => {
      const port = typeof p.hostPort === "number" ? p.hostPort : 0;
      if (port === 0) return;
      const key = `${str(p.protocol)}/${str(p.hostIP)}/${port}`;
      if (seen.has(key)) {
        errs.duplicate(`${path}[${i}].ports[${j}].hostPort`, key);
      } else seen.add(key);
    });
  });
}

/** The pod fields an env var may read (upstream `validEnvDownwardAPIFieldPathExpressions`). */
const ENV_FIELD_PATHS =
  /^(metadata\.(name|namespace|uid|labels|annotations)|metadata\.(labels|annotations)\[.+\]|spec\.(nodeName|serviceAccountName)|status\.(hostIP|hostIPs|podIP|podIPs))$/;

/** The pod fields a downward API volume may project. */
const VOLUME_FIELD_PATHS =
  /^(metadata\.(name|namespace|uid|labels|annotations)|metadata\.(labels|annotations)\[.+\])$/;

const RESTART_POLICIES = ["Always", "OnFailure", "Never"];
const DNS_POLICIES = [
  "ClusterFirstWithHostNet",
  "ClusterFirst",
  "Default",
  "None",
];

/** Upstream `ValidatePodSpec`, then the pod-only and create-only rules, in upstream's order. */
function validateSpec(spec: Json, errs: Errors): void {
  if (!set(spec.terminationGracePeriodSeconds)) {
    errs.required("spec.terminationGracePeriodSeconds");
  }
  const pod: PodContext = {
    volumes: validateVolumes(spec, errs),
    claims: podClaimNames(spec),
    restartPolicy: str(spec.restartPolicy),
    hostUsers: usesHostUsers(spec),
  };
  validatePodResourceClaims(spec, errs);
  validateContainers(spec, pod, errs);
  validateInitContainers(spec, pod, errs);
  validateEphemeralContainers(spec, pod, errs);
  if (spec.hostNetwork === true) {
    list(spec.containers).forEach((c, i) => {
      list(c.ports).forEach((p, j) => {
        if ((p.hostPort ?? 0) !== (p.containerPort ?? 0)) {
          errs.invalid(
            `spec.containers[${i}].ports[${j}].hostPort`,
            p.hostPort ?? 0,
            "must match `containerPort` when `hostNetwork` is true",
          );
        }
      });
    });
  }
  const restart = str(spec.restartPolicy);
  if (!restart) errs.required("spec.restartPolicy");
  else if (!RESTART_POLICIES.includes(restart)) {
    errs.notSupported("spec.restartPolicy", restart, RESTART_POLICIES);
  }
  const dns = str(spec.dnsPolicy);
  if (!dns) errs.required("spec.dnsPolicy");
  else if (!DNS_POLICIES.includes(dns)) {
    errs.notSupported("spec.dnsPolicy", dns, DNS_POLICIES);
  }
  validateLabels(spec.nodeSelector, "spec.nodeSelector", errs);
  validatePodSecurityContext(spec, errs);
  list(spec.imagePullSecrets).forEach((s, i) => {
    if (Object.keys(s).some((k) => k !== "name")) {
      errs.invalid(`spec.imagePullSecrets[${i}]`, s, "only name may be set");
    }
  });
  validateAffinity(spec, errs);
  validateDnsConfig(spec, errs);
  validateReadinessGates(spec, errs);
  validateSchedulingGates(spec, errs);
  validateTopologySpread(spec, errs);
  validateWindowsHostProcess(spec, errs);
  validateHostUsers(spec, errs);
  validateHostnameOverride(spec, errs);
  const sa = str(spec.serviceAccountName);
  if (sa) dnsSubdomain(errs, "spec.serviceAccountName", sa);
  const nodeName = str(spec.nodeName);
  if (nodeName) dnsSubdomain(errs, "spec.nodeName", nodeName);
  const deadline = spec.activeDeadlineSeconds;
  if (typeof deadline === "number" && (deadline < 1 || deadline > 2147483647)) {
    errs.invalid(
      "spec.activeDeadlineSeconds",
      deadline,
      "must be between 1 and 2147483647, inclusive",
    );
  }
  const hostname = str(spec.hostname);
  if (hostname) dnsLabel(errs, "spec.hostname", hostname);
  const subdomain = str(spec.subdomain);
  if (subdomain) dnsLabel(errs, "spec.subdomain", subdomain);
  validateTolerations(spec.tolerations, errs);
  validateHostAliases(spec, errs);
  const pcn = str(spec.priorityClassName);
  if (pcn) dnsSubdomain(errs, "spec.priorityClassName", pcn);
  if (set(spec.runtimeClassName)) {
    dnsSubdomain(errs, "spec.runtimeClassName", str(spec.runtimeClassName));
  }
  if (set(spec.preemptionPolicy)) {
    const policy = str(spec.preemptionPolicy);
    const valid = ["PreemptLowerPriority", "Never"];
    if (!policy) errs.required("spec.preemptionPolicy");
    else if (!valid.includes(policy)) {
      errs.notSupported("spec.preemptionPolicy", policy, valid);
    }
  }
  validateOverhead(spec, errs);
  const os = obj(spec.os);
  if (os) {
    const name = str(os.name);
    if (!name) errs.required("spec.os.name");
    else if (name !== "linux" && name !== "windows") {
      errs.notSupported("spec.os", name, ["linux", "windows"]);
    } else validateForOs(spec, name, errs);
  }
  validateFileKeyRefVolumes(spec, errs);
  // validatePodMetadataAndSpec: rules for pods (not templates)
  if (!sa) {
    list(spec.volumes).forEach((v, i) => {
      list(obj(v.projected)?.sources).forEach((source, j) => {
        if (set(source.serviceAccountToken)) {
          errs.forbidden(
            `spec.volumes[${i}].projected.sources[${j}].serviceAccountToken`,
            "must not be specified when serviceAccountName is not set",
          );
        }
      });
    });
  }
  for (const key of ["containers", "initContainers"]) {
    list(spec[key]).forEach((c, i) =>
      imageWhitespace(c, `spec.${key}[${i}]`, errs)
    );
  }
  // ValidatePodCreate
  if (list(spec.ephemeralContainers).length > 0) {
    errs.forbidden("spec.ephemeralContainers", "cannot be set on create");
  }
  if (nodeName && list(spec.schedulingGates).length > 0) {
    errs.forbidden(
      "spec.nodeName",
      "cannot be set until all schedulingGates have been cleared",
    );
  }
}

/** Upstream `validateFileKeyRefVolumes`: a file key's volume must be an emptyDir. */
function validateFileKeyRefVolumes(spec: Json, errs: Errors): void {
  const sources = new Map(list(spec.volumes).map((v) => [str(v.name), v]));
  for (const [c, path] of containersWithPath(spec)) {
    list(c.env).forEach((e, j) => {
      const ref = obj(obj(e.valueFrom)?.fileKeyRef);
      if (!ref) return;
      const name = str(ref.volumeName);
      const at = `${path}.env[${j}].valueFrom.fileKeyRef.volumeName`;
      const volume = sources.get(name);
      if (!volume) errs.notFound(at, name);
      else if (!set(volume.emptyDir)) {
        errs.invalid(at, name, "referenced volume must be of type emptyDir");
      }
    });
  }
}
