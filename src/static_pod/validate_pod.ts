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
import { DecodedQuantity, type GoQuantity } from "./go_quantity.ts";

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
      errs.invalid(`${field}[${k}]`, v, m);
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

const VOLUME_SOURCES = [
  "hostPath",
  "emptyDir",
  "gcePersistentDisk",
  "awsElasticBlockStore",
  "gitRepo",
  "secret",
  "nfs",
  "iscsi",
  "glusterfs",
  "persistentVolumeClaim",
  "rbd",
  "flexVolume",
  "cinder",
  "cephfs",
  "flocker",
  "downwardAPI",
  "fc",
  "azureFile",
  "configMap",
  "vsphereVolume",
  "quobyte",
  "azureDisk",
  "photonPersistentDisk",
  "projected",
  "portworxVolume",
  "scaleIO",
  "storageos",
  "csi",
  "ephemeral",
  "image",
];

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
    const name = str(v.name);
    if (!name) errs.required(`${path}.name`);
    else {
      const before = errs.list.length;
      dnsLabel(errs, `${path}.name`, name);
      if (errs.list.length === before && names.has(name)) {
        errs.duplicate(`${path}.name`, name);
      }
    }
    if (name) names.add(name);
    const sources = VOLUME_SOURCES.filter((k) => set(v[k]));
    if (sources.length === 0) {
      errs.required(path, "must specify a volume type");
    } else if (sources.length > 1) {
      errs.forbidden(
        `${path}.${sources[1]}`,
        "may not specify more than 1 volume type",
      );
    } else {
      const hostPath = obj(v.hostPath);
      if (hostPath) {
        if (!str(hostPath.path)) errs.required(`${path}.hostPath.path`);
        const type = str(hostPath.type);
        if (!HOST_PATH_TYPES.includes(type)) {
          errs.notSupported(
            `${path}.hostPath.type`,
            type,
            HOST_PATH_TYPES.slice(1).concat([""]).sort(),
          );
        }
      }
    }
  });
  return names;
}

function quantitySign(q: unknown): number {
  if (!(q instanceof DecodedQuantity)) return 0;
  const g: GoQuantity = q.q;
  const m = g.dec ? g.dec.unscaled : g.value;
  return m < 0n ? -1 : m > 0n ? 1 : 0;
}

function quantityCompare(a: unknown, b: unknown): number {
  if (!(a instanceof DecodedQuantity) || !(b instanceof DecodedQuantity)) {
    return 0;
  }
  const value = (q: GoQuantity) =>
    q.dec ? { m: q.dec.unscaled, e: -q.dec.scale } : { m: q.value, e: q.scale };
  const x = value(a.q);
  const y = value(b.q);
  const e = Math.min(x.e, y.e);
  const xm = x.m * 10n ** BigInt(x.e - e);
  const ym = y.m * 10n ** BigInt(y.e - e);
  return xm < ym ? -1 : xm > ym ? 1 : 0;
}

function validateResources(res: Json, path: string, errs: Errors): void {
  const limits = obj(res.limits) ?? {};
  const requests = obj(res.requests) ?? {};
  for (
    const [kind, map] of [["limits", limits], ["requests", requests]] as const
  ) {
    for (const [name, q] of Object.entries(map)) {
      const field = `${path}.${kind}[${name}]`;
      for (const m of qualifiedNameErrors(name)) errs.invalid(field, name, m);
      if (quantitySign(q) < 0) {
        errs.invalid(
          field,
          String(JSON.parse(JSON.stringify(q))),
          "must be greater than or equal to 0",
        );
      }
    }
  }
  for (const [name, q] of Object.entries(requests)) {
    const limit = limits[name];
    if (limit !== undefined && quantityCompare(q, limit) > 0) {
      errs.invalid(
        `${path}.requests`,
        JSON.parse(JSON.stringify(q)),
        `must be less than or equal to ${name} limit of ${
          JSON.parse(JSON.stringify(limit))
        }`,
      );
    }
  }
}

function validateProbe(
  probe: Json | undefined,
  path: string,
  errs: Errors,
  kind: "liveness" | "readiness" | "startup",
): void {
  if (!probe) return;
  const handlers = ["exec", "httpGet", "tcpSocket", "grpc"].filter((k) =>
    set(probe[k])
  );
  if (handlers.length === 0) {
    errs.required(path, "must specify a handler type");
  } else if (handlers.length > 1) {
    errs.forbidden(
      `${path}.${handlers[1]}`,
      "may not specify more than 1 handler type",
    );
  }
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
      if (
        !/^[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$/.test(pname) ||
        pname.includes("--") || !/[a-z]/.test(pname)
      ) {
        errs.invalid(`${pp}.name`, pname, "must be an IANA_SVC_NAME");
      } else if (portNames.has(pname)) errs.duplicate(`${pp}.name`, pname);
      else portNames.add(pname);
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
    const ename = str(e.name);
    if (!ename) errs.required(`${path}.env[${i}].name`);
    else if (!/^[ -~]+$/.test(ename) || ename.includes("=")) {
      errs.invalid(
        `${path}.env[${i}].name`,
        ename,
        "a valid environment variable name must consist only of printable ASCII characters other than '='",
      );
    }
  });
  const mountPaths = new Set<string>();
  list(c.volumeMounts).forEach((m, i) => {
    const mp = `${path}.volumeMounts[${i}]`;
    const mname = str(m.name);
    if (!mname) errs.required(`${mp}.name`);
    else if (!volumes.has(mname)) errs.notFound(`${mp}.name`, mname);
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
