/**
 * The ConfigMaps and Secrets a pod references by name (upstream `VisitPodConfigmapNames` and
 * `VisitPodSecretNames`, the parts this kubelet reads): volumes and projected volume sources,
 * env and envFrom of every container, and `imagePullSecrets`.
 * @module
 */
import type { ObjectKind } from "../api/mod.ts";
import type { Container, Pod } from "../api/mod.ts";

/** `(kind, name)` pairs a pod uses, names unique per kind. */
export interface PodReferences {
  configmaps: Set<string>;
  secrets: Set<string>;
}

interface VolumeSources {
  configMap?: { name?: string };
  secret?: { secretName?: string };
  projected?: {
    sources?: {
      configMap?: { name?: string };
      secret?: { name?: string };
    }[];
  };
}

function containersOf(pod: Pod): Container[] {
  const ephemeral =
    (pod.spec as { ephemeralContainers?: Container[] }).ephemeralContainers ??
      [];
  return [
    ...(pod.spec.initContainers ?? []),
    ...pod.spec.containers,
    ...ephemeral,
  ];
}

/** Names of the objects `container` reads for its environment. */
export function containerReferences(container: Container): PodReferences {
  const refs: PodReferences = { configmaps: new Set(), secrets: new Set() };
  const add = (kind: ObjectKind, name: string | undefined) => {
    if (name) refs[kind].add(name);
  };
  for (const from of container.envFrom ?? []) {
    add("configmaps", from.configMapRef?.name);
    add("secrets", from.secretRef?.name);
  }
  for (const env of container.env ?? []) {
    add("configmaps", env.valueFrom?.configMapKeyRef?.name);
    add("secrets", env.valueFrom?.secretKeyRef?.name);
  }
  return refs;
}

/** Every ConfigMap and Secret name `pod` references. */
export function podReferences(pod: Pod): PodReferences {
  const refs: PodReferences = { configmaps: new Set(), secrets: new Set() };
  const add = (kind: ObjectKind, name: string | undefined) => {
    if (name) refs[kind].add(name);
  };
  for (const s of pod.spec.imagePullSecrets ?? []) add("secrets", s.name);
  for (const v of (pod.spec.volumes ?? []) as VolumeSources[]) {
    add("configmaps", v.configMap?.name);
    add("secrets", v.secret?.secretName);
    for (const source of v.projected?.sources ?? []) {
      add("configmaps", source.configMap?.name);
      add("secrets", source.secret?.name);
    }
  }
  for (const c of containersOf(pod)) {
    const own = containerReferences(c);
    for (const n of own.configmaps) refs.configmaps.add(n);
    for (const n of own.secrets) refs.secrets.add(n);
  }
  return refs;
}
