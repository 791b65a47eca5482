/**
 * Upstream `HasAPIObjectReference` (`pkg/api/pod`), which the kubelet runs on every static pod
 * (feature PreventStaticPodAPIReferences, on by default): a static pod may not use anything that
 * needs the API server (service accounts, secrets, config maps, claims, API-backed volumes).
 *
 * @module
 */

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v)
    ? v as Json
    : undefined;
const list = (v: unknown): Json[] =>
  Array.isArray(v) ? v.filter((x) => obj(x)) as Json[] : [];
const set = (v: unknown) => v !== undefined && v !== null;

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

function usesSecrets(spec: Json): boolean {
  if (list(spec.imagePullSecrets).length > 0) return true;
  for (const c of containers(spec)) {
    if (list(c.envFrom).some((e) => set(e.secretRef))) return true;
    if (list(c.env).some((e) => set(obj(e.valueFrom)?.secretKeyRef))) {
      return true;
    }
  }
  for (const v of list(spec.volumes)) {
    const named = (k: string) => set(obj(v[k])?.secretRef);
    if (set(v.secret) || set(v.azureFile)) return true;
    if (
      ["cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos"]
        .some(named)
    ) {
      return true;
    }
    const csi = obj(v.csi);
    if (csi && set(csi.nodePublishSecretRef)) return true;
    if (list(obj(v.projected)?.sources).some((s) => set(s.secret))) return true;
  }
  return false;
}

function usesConfigMaps(spec: Json): boolean {
  for (const c of containers(spec)) {
    if (list(c.envFrom).some((e) => set(e.configMapRef))) return true;
    if (list(c.env).some((e) => set(obj(e.valueFrom)?.configMapKeyRef))) {
      return true;
    }
  }
  for (const v of list(spec.volumes)) {
    if (set(v.configMap)) return true;
    if (list(obj(v.projected)?.sources).some((s) => set(s.configMap))) {
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
