/**
 * The defaults the API machinery's decoder applies to a v1 Pod (`SetObjectDefaults_Pod` in
 * `pkg/apis/core/v1`), on the decoded JSON form (see `decode_v1.ts`), in upstream's order:
 * requests from limits, service links, host-network ports, then the spec, volume, container,
 * probe and resource-list defaults (quantities rounded up to milli units). Mutates `pod`.
 *
 * @module
 */

import { DecodedQuantity, roundUpGoQuantity } from "./go_quantity.ts";
import { VOLUME_SOURCES } from "./volume_sources.ts";

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) &&
    !(v instanceof DecodedQuantity)
    ? v as Json
    : undefined;
const list = (v: unknown): Json[] =>
  Array.isArray(v) ? v.filter((x) => obj(x)) as Json[] : [];

/** Upstream `SetObjectDefaults_Pod`. */
export function setPodDefaults(pod: Json): void {
  const spec = (pod.spec ??= {}) as Json;
  // SetDefaults_Pod
  for (const key of ["containers", "initContainers"]) {
    for (const c of list(spec[key])) {
      const res = obj(c.resources);
      const limits = obj(res?.limits);
      if (!res || !limits) continue;
      const requests = (res.requests = obj(res.requests) ?? {}) as Json;
      for (const [name, q] of Object.entries(limits)) {
        if (!(name in requests)) requests[name] = q;
      }
    }
  }
  spec.enableServiceLinks ??= true;
  if (spec.hostNetwork === true) {
    for (const key of ["containers", "initContainers"]) {
      for (const c of list(spec[key])) {
        for (const p of list(c.ports)) {
          if (!p.hostPort) p.hostPort = p.containerPort ?? 0;
        }
      }
    }
  }
  // SetDefaults_PodSpec
  if (!spec.dnsPolicy) spec.dnsPolicy = "ClusterFirst";
  if (!spec.restartPolicy) spec.restartPolicy = "Always";
  spec.securityContext ??= {};
  spec.terminationGracePeriodSeconds ??= 30;
  if (!spec.schedulerName) spec.schedulerName = "default-scheduler";
  for (const v of list(spec.volumes)) setVolumeDefaults(v);
  for (const c of list(spec.initContainers)) setContainerDefaults(c);
  for (const c of list(spec.containers)) setContainerDefaults(c);
  for (const c of list(spec.ephemeralContainers)) setContainerDefaults(c);
  roundResourceList(spec, "overhead");
  const podResources = obj(spec.resources);
  if (podResources) {
    roundResourceList(podResources, "limits");
    roundResourceList(podResources, "requests");
  }
  const status = obj(pod.status);
  for (
    const key of [
      "initContainerStatuses",
      "containerStatuses",
      "ephemeralContainerStatuses",
    ]
  ) {
    for (const s of list(status?.[key])) {
      roundResourceList(s, "allocatedResources");
      const r = obj(s.resources);
      if (r) {
        roundResourceList(r, "limits");
        roundResourceList(r, "requests");
      }
    }
  }
}

/** Upstream `SetDefaults_ResourceList`: every quantity rounded up to milli units. */
function roundResourceList(parent: Json, key: string): void {
  const rl = obj(parent[key]);
  if (!rl) return;
  for (const [name, q] of Object.entries(rl)) {
    if (q instanceof DecodedQuantity) {
      rl[name] = new DecodedQuantity(roundUpGoQuantity(q.q, -3));
    }
  }
}

function setVolumeDefaults(v: Json): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined && v[k] !== null)) {
    v.emptyDir = {};
  }
  const hostPath = obj(v.hostPath);
  if (hostPath) hostPath.type ??= "";
  const secret = obj(v.secret);
  if (secret) secret.defaultMode ??= 0o644;
  const iscsi = obj(v.iscsi);
  if (iscsi && !iscsi.iscsiInterface) iscsi.iscsiInterface = "default";
  const rbd = obj(v.rbd);
  if (rbd) {
    if (!rbd.pool) rbd.pool = "rbd";
    if (!rbd.user) rbd.user = "admin";
    if (!rbd.keyring) rbd.keyring = "/etc/ceph/keyring";
  }
  const downward = obj(v.downwardAPI);
  if (downward) {
    downward.defaultMode ??= 0o644;
    for (const item of list(downward.items)) fieldRefDefaults(item.fieldRef);
  }
  const configMap = obj(v.configMap);
  if (configMap) configMap.defaultMode ??= 0o644;
  const azureDisk = obj(v.azureDisk);
  if (azureDisk) {
    azureDisk.cachingMode ??= "ReadWrite";
    azureDisk.fsType ??= "ext4";
    azureDisk.readOnly ??= false;
    azureDisk.kind ??= "Shared";
  }
  const projected = obj(v.projected);
  if (projected) {
    projected.defaultMode ??= 0o644;
    for (const source of list(projected.sources)) {
      const d = obj(source.downwardAPI);
      if (d) {
        for (const item of list(d.items)) fieldRefDefaults(item.fieldRef);
      }
      const token = obj(source.serviceAccountToken);
      if (token) token.expirationSeconds ??= 3600;
    }
  }
  const scaleIO = obj(v.scaleIO);
  if (scaleIO) {
    if (!scaleIO.storageMode) scaleIO.storageMode = "ThinProvisioned";
    if (!scaleIO.fsType) scaleIO.fsType = "xfs";
  }
  const template = obj(obj(v.ephemeral)?.volumeClaimTemplate);
  if (template) {
    const spec = (template.spec ??= {}) as Json;
    spec.volumeMode ??= "Filesystem";
    const res = obj(spec.resources);
    if (res) {
      roundResourceList(res, "limits");
      roundResourceList(res, "requests");
    }
  }
}

function fieldRefDefaults(ref: unknown): void {
  const r = obj(ref);
  if (r && !r.apiVersion) r.apiVersion = "v1";
}

/** `Always` for a `latest` tag (also implied by no tag and no digest), else `IfNotPresent`. */
export function defaultImagePullPolicy(
  image: string,
): "Always" | "IfNotPresent" {
  return imageTag(image) === "latest" ? "Always" : "IfNotPresent";
}

// The distribution reference grammar (github.com/distribution/reference) that
// `parsers.ParseImageName` parses with: [domain/]path[:tag][@digest].
const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";
const DOMAIN_PART = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const DOMAIN =
  `(?:${DOMAIN_PART}(?:\\.${DOMAIN_PART})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);

/** Upstream `parsers.ParseImageName`'s tag: "" for a bad reference or a digest alone. */
function imageTag(image: string): string {
  const m = REFERENCE.exec(image);
  if (!m || m[1]!.length > 255) return "";
  if (/^[a-f0-9]{64}$/.test(image)) return "";
  if (m[2]) return m[2];
  return m[3] ? "" : "latest";
}

function setContainerDefaults(c: Json): void {
  if (!c.imagePullPolicy) {
    c.imagePullPolicy = defaultImagePullPolicy(String(c.image ?? ""));
  }
  if (!c.terminationMessagePath) {
    c.terminationMessagePath = "/dev/termination-log";
  }
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = "File";
  for (const p of list(c.ports)) if (!p.protocol) p.protocol = "TCP";
  for (const e of list(c.env)) {
    const from = obj(e.valueFrom);
    if (!from) continue;
    fieldRefDefaults(from.fieldRef);
    const fileKey = obj(from.fileKeyRef);
    if (fileKey) fileKey.optional ??= false;
  }
  const res = obj(c.resources);
  if (res) {
    roundResourceList(res, "limits");
    roundResourceList(res, "requests");
  }
  for (const key of ["livenessProbe", "readinessProbe", "startupProbe"]) {
    const probe = obj(c[key]);
    if (!probe) continue;
    if (!probe.timeoutSeconds) probe.timeoutSeconds = 1;
    if (!probe.periodSeconds) probe.periodSeconds = 10;
    if (!probe.successThreshold) probe.successThreshold = 1;
    if (!probe.failureThreshold) probe.failureThreshold = 3;
    httpGetDefaults(probe.httpGet);
    const grpc = obj(probe.grpc);
    if (grpc) grpc.service ??= "";
  }
  const lifecycle = obj(c.lifecycle);
  if (lifecycle) {
    httpGetDefaults(obj(lifecycle.postStart)?.httpGet);
    httpGetDefaults(obj(lifecycle.preStop)?.httpGet);
  }
}

function httpGetDefaults(action: unknown): void {
  const a = obj(action);
  if (!a) return;
  if (!a.path) a.path = "/";
  if (!a.scheme) a.scheme = "HTTP";
}
