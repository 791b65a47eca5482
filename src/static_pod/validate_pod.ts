/**
 * Upstream `ValidatePodCreate` (`pkg/apis/core/validation`, default `PodValidationOptions`) for
 * the rules a static pod manifest can hit: metadata (names, labels, annotations), volumes,
 * containers (names, images, ports, env, mounts, pull and termination-message policies,
 * resources, probes), the pod's restart and DNS policies, host names, tolerations and the
 * other pod-level scalars. Each error carries upstream's type, field path and text.
 *
 * @module
 */

import {
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  labelValueErrors,
  qualifiedNameErrors,
} from "../util/k8s_names.ts";
import { isExtendedResourceName } from "../util/resource_names.ts";
import { VOLUME_SOURCES } from "./volume_sources.ts";
import {
  DecodedQuantity,
  type GoQuantity,
  goQuantityString,
  parseGoQuantity,
} from "./go_quantity.ts";

type Json = Record<string, unknown>;

/** One upstream `field.Error`: type (`Required value`, `Invalid value`…), path and detail. */
export interface FieldError {
  type: string;
  field: string;
  detail: string;
  /** Upstream's `Error()` text. */
  message: string;
}

const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) &&
    !(v instanceof DecodedQuantity)
    ? v as Json
    : undefined;
const list = (v: unknown): Json[] =>
  Array.isArray(v) ? v.map((x) => obj(x) ?? {}) : [];
const str = (v: unknown): string => typeof v === "string" ? v : "";
const set = (v: unknown) => v !== undefined && v !== null;

function badValueText(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  return JSON.stringify(value);
}

class Errors {
  readonly list: FieldError[] = [];
  private add(type: string, field: string, body: string, detail: string) {
    const message = `${field}: ${body}${detail ? `: ${detail}` : ""}`;
    this.list.push({ type, field, detail, message });
  }
  required(field: string, detail = "") {
    this.add("FieldValueRequired", field, "Required value", detail);
  }
  forbidden(field: string, detail: string) {
    this.add("FieldValueForbidden", field, "Forbidden", detail);
  }
  invalid(field: string, value: unknown, detail: string) {
    this.add(
      "FieldValueInvalid",
      field,
      `Invalid value: ${badValueText(value)}`,
      detail,
    );
  }
  duplicate(field: string, value: unknown) {
    this.add(
      "FieldValueDuplicate",
      field,
      `Duplicate value: ${badValueText(value)}`,
      "",
    );
  }
  notFound(field: string, value: unknown) {
    this.add(
      "FieldValueNotFound",
      field,
      `Not found: ${badValueText(value)}`,
      "",
    );
  }
  notSupported(field: string, value: unknown, valid: string[]) {
    this.add(
      "FieldValueNotSupported",
      field,
      `Unsupported value: ${badValueText(value)}`,
      valid.length
        ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(", ")}`
        : "",
    );
  }
  tooLong(field: string, max: number) {
    this.add(
      "FieldValueTooLong",
      field,
      "Too long",
      `may not be more than ${max} bytes`,
    );
  }
}

/** The field errors of a defaulted static pod (empty when valid). */
export function validatePodCreate(pod: Json): FieldError[] {
  const errs = new Errors();
  validateMetadata(obj(pod.metadata) ?? {}, errs);
  validateSpec(obj(pod.spec) ?? {}, errs);
  return errs.list;
}

function dnsLabel(errs: Errors, field: string, value: string): void {
  for (const m of dns1123LabelErrors(value)) errs.invalid(field, value, m);
}

function dnsSubdomain(errs: Errors, field: string, value: string): void {
  for (const m of dns1123SubdomainErrors(value)) errs.invalid(field, value, m);
}

function validateLabels(map: unknown, field: string, errs: Errors): void {
  for (const [k, v] of Object.entries(obj(map) ?? {})) {
    for (const m of qualifiedNameErrors(k)) errs.invalid(field, k, m);
    for (const m of labelValueErrors(str(v))) {
      errs.invalid(field, v, m);
    }
  }
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

function validateVolumes(spec: Json, errs: Errors): Set<string> {
  const names = new Set<string>();
  list(spec.volumes).forEach((v, i) => {
    const path = `spec.volumes[${i}]`;
    const before = errs.list.length;
    const name = str(v.name);
    if (!name) errs.required(`${path}.name`);
    else {
      const before = errs.list.length;
      dnsLabel(errs, `${path}.name`, name);
      if (errs.list.length === before && names.has(name)) {
        errs.duplicate(`${path}.name`, name);
      }
    }
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
    // upstream only lists volumes without errors, so mounts of a bad one are "Not found"
    if (name && errs.list.length === before) names.add(name);
  });
  return names;
}

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
function decimalOf(q: GoQuantity): { m: bigint; e: number } {
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

/** Upstream `validateResourceRequirements` for a container. */
function validateResources(res: Json, path: string, errs: Errors): void {
  const limits = obj(res.limits) ?? {};
  const requests = obj(res.requests) ?? {};
  const text = (q: GoQuantity) => goQuantityString(q);
  let cpuOrMemory = false;
  let hugePages = false;
  const checkValue = (name: string, q: GoQuantity, field: string) => {
    if (decimalOf(q).m < 0n) {
      errs.invalid(field, text(q), "must be greater than or equal to 0");
    }
    if (isExtendedResourceName(name) && milliValue(q) % 1000n !== 0n) {
      errs.invalid(field, text(q), "must be an integer");
    }
    if (isHugePages(name)) {
      hugePages = true;
      const size = hugePageSize(name);
      if (size !== undefined && size > 0n && scaledValue(q, 0) % size !== 0n) {
        errs.invalid(
          field,
          text(q),
          `${text(q)} is not positive integer multiple of ${name}`,
        );
      }
    }
    if (name === "cpu" || name === "memory") cpuOrMemory = true;
  };
  for (const [name, raw] of Object.entries(limits)) {
    if (!(raw instanceof DecodedQuantity)) continue;
    const field = `${path}.limits[${name}]`;
    resourceNameErrors(name, field, errs);
    checkValue(name, raw.q, field);
  }
  for (const [name, raw] of Object.entries(requests)) {
    if (!(raw instanceof DecodedQuantity)) continue;
    const field = `${path}.requests[${name}]`;
    resourceNameErrors(name, field, errs);
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
    checkValue(name, raw.q, field);
  }
  if (!cpuOrMemory && hugePages) {
    errs.forbidden(path, "HugePages require cpu or memory");
  }
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

function validateContainer(
  c: Json,
  path: string,
  volumes: Set<string>,
  errs: Errors,
  probes: boolean,
): void {
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
  const pull = str(c.imagePullPolicy);
  if (!pull) errs.required(`${path}.imagePullPolicy`);
  else if (!PULL_POLICIES.includes(pull)) {
    errs.notSupported(`${path}.imagePullPolicy`, pull, PULL_POLICIES);
  }
  validateResources(obj(c.resources) ?? {}, `${path}.resources`, errs);
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
  if (probes) {
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

function validateSpec(spec: Json, errs: Errors): void {
  if (!set(spec.terminationGracePeriodSeconds)) {
    errs.required("spec.terminationGracePeriodSeconds");
  }
  const volumes = validateVolumes(spec, errs);
  const containers = Array.isArray(spec.containers)
    ? list(spec.containers)
    : [];
  if (containers.length === 0) errs.required("spec.containers");
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const path = `spec.containers[${i}]`;
    validateContainer(c, path, volumes, errs, true);
    const name = str(c.name);
    if (names.has(name)) errs.duplicate(`${path}.name`, name);
    else names.add(name);
    if (set(c.restartPolicy)) {
      errs.forbidden(
        `${path}.restartPolicy`,
        "may not be set for non-init containers",
      );
    }
  });
  hostPortConflicts(containers, "spec.containers", errs);
  const initNames = new Set<string>();
  list(spec.initContainers).forEach((c, i) => {
    const path = `spec.initContainers[${i}]`;
    validateContainer(
      c,
      path,
      volumes,
      errs,
      str(c.restartPolicy) === "Always",
    );
    const name = str(c.name);
    if (initNames.has(name) || names.has(name)) {
      errs.duplicate(`${path}.name`, name);
    }
    initNames.add(name);
  });
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
  if (spec.hostNetwork === true) {
    for (const key of ["containers", "initContainers"]) {
      list(spec[key]).forEach((c, i) => {
        list(c.ports).forEach((p, j) => {
          if ((p.hostPort ?? 0) !== (p.containerPort ?? 0)) {
            errs.invalid(
              `spec.${key}[${i}].ports[${j}].hostPort`,
              p.hostPort ?? 0,
              "must match `containerPort` when `hostNetwork` is true",
            );
          }
        });
      });
    }
  }
  if (dns === "None" && !obj(spec.dnsConfig)) {
    errs.required(
      "spec.dnsConfig",
      "must provide `dnsConfig` when `dnsPolicy` is None",
    );
  }
  const seccomp = obj(obj(spec.securityContext)?.seccompProfile);
  if (seccomp && !str(seccomp.type)) {
    errs.required(
      "spec.securityContext.seccompProfile.type",
      "type is required when seccompProfile is set",
    );
  } else if (
    seccomp &&
    !["Localhost", "RuntimeDefault", "Unconfined"].includes(str(seccomp.type))
  ) {
    errs.notSupported(
      "spec.securityContext.seccompProfile.type",
      seccomp.type,
      ["Localhost", "RuntimeDefault", "Unconfined"],
    );
  }
  validateTolerations(spec.tolerations, errs);
  validateLabels(spec.nodeSelector, "spec.nodeSelector", errs);
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
  const pcn = str(spec.priorityClassName);
  if (pcn) dnsSubdomain(errs, "spec.priorityClassName", pcn);
}
