/**
 * Upstream `HasAPIObjectReference` (`pkg/api/pod`), which the kubelet runs on every static pod
 * (feature PreventStaticPodAPIReferences, on by default): a static pod may not use anything that
 * needs the API server (service accounts, secrets, config maps, claims, API-backed volumes).
 *
 * @module
 */

import { type Json, list, obj, set, str } from "./field_errors.ts";

/** Volume sources that need no API object. */
const LOCAL_VOLUMES = [
  "awsElasticBlockStore",
  "azureDisk",
  "cephfs",
  "cinder",
  "downwardAPI",
  "emptyDir",
  "fc",
  "flexVolume",
  "flocker",
  "gcePersistentDisk",
  "gitRepo",
  "hostPath",
  "image",
  "iscsi",
  "nfs",
  "photonPersistentDisk",
  "portworxVolume",
  "quobyte",
  "rbd",
  "scaleIO",
  "storageos",
  "vsphereVolume",
];

const API_VOLUMES: [string, string][] = [
  ["configMap", "configmaps (via configmap volumes)"],
  ["secret", "secrets (via secret volumes)"],
  ["csi", "csidrivers (via CSI volumes)"],
  ["glusterfs", "endpoints (via glusterFS volumes)"],
  ["persistentVolumeClaim", "persistentvolumeclaims"],
  ["ephemeral", "persistentvolumeclaims (via ephemeral volumes)"],
  ["azureFile", "secrets (via azureFile volumes)"],
];

const PROJECTIONS: [string, string | undefined][] = [
  ["configMap", "configmaps (via projected volumes)"],
  ["secret", "secrets (via projected volumes)"],
  ["serviceAccountToken", "serviceaccounts (via projected volumes)"],
  ["clusterTrustBundle", "clustertrustbundles"],
  ["podCertificate", "podcertificates"],
  ["downwardAPI", undefined],
];

function containers(spec: Json): Json[] {
  return [
    ...list(spec.initContainers),
    ...list(spec.containers),
    ...list(spec.ephemeralContainers),
  ];
}

/** Whether a reference names an object (upstream skips empty names when visiting them). */
const named = (ref: unknown, key = "name"): boolean =>
  str(obj(ref)?.[key]) !== "";

/** Upstream `VisitPodSecretNames` finding one non-empty name. */
function usesSecrets(spec: Json): boolean {
  if (list(spec.imagePullSecrets).some((r) => named(r))) return true;
  for (const c of containers(spec)) {
    if (list(c.envFrom).some((e) => named(e.secretRef))) return true;
    if (list(c.env).some((e) => named(obj(e.valueFrom)?.secretKeyRef))) {
      return true;
    }
  }
  for (const v of list(spec.volumes)) {
    if (named(v.secret, "secretName") || named(v.azureFile, "secretName")) {
      return true;
    }
    if (
      ["cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos"]
        .some((k) => named(obj(v[k])?.secretRef))
    ) {
      return true;
    }
    if (named(obj(v.csi)?.nodePublishSecretRef)) return true;
    if (list(obj(v.projected)?.sources).some((s) => named(s.secret))) {
      return true;
    }
  }
  return false;
}

/** Upstream `VisitPodConfigmapNames` finding one non-empty name. */
function usesConfigMaps(spec: Json): boolean {
  for (const c of containers(spec)) {
    if (list(c.envFrom).some((e) => named(e.configMapRef))) return true;
    if (list(c.env).some((e) => named(obj(e.valueFrom)?.configMapKeyRef))) {
      return true;
    }
  }
  for (const v of list(spec.volumes)) {
    if (named(v.configMap)) return true;
    if (list(obj(v.projected)?.sources).some((s) => named(s.configMap))) {
      return true;
    }
  }
  return false;
}

/** The API resource a static pod refers to ("" when none), or an error message. */
export function apiObjectReference(pod: Json): { resource: string } | {
  error: string;
} {
  const spec = obj(pod.spec) ?? {};
  if (spec.serviceAccountName || spec.serviceAccount) {
    return { resource: "serviceaccounts" };
  }
  if (usesSecrets(spec)) return { resource: "secrets" };
  if (usesConfigMaps(spec)) return { resource: "configmaps" };
  if (list(spec.resourceClaims).length > 0) {
    return { resource: "resourceclaims" };
  }
  for (const v of list(spec.volumes)) {
    if (LOCAL_VOLUMES.some((k) => set(v[k]))) continue;
    const api = API_VOLUMES.find(([k]) => set(v[k]));
    if (api) return { resource: api[1] };
    const projected = obj(v.projected);
    if (!projected) {
      return { error: `unknown volume type for volume  "${v.name ?? ""}"` };
    }
    for (const s of list(projected.sources)) {
      const found = PROJECTIONS.find(([k]) => set(s[k]));
      if (!found) {
        return {
          error: `unknown source for projected volume "${v.name ?? ""}"`,
        };
      }
      if (found[1]) return { resource: found[1] };
    }
  }
  return { resource: "" };
}
