/**
 * Converts a decoded, defaulted v1 Pod (JSON-shaped) into the Go value of the internal
 * `core.Pod` the upstream kubelet hashes (`Convert_v1_Pod_To_core_Pod`): fields are matched by
 * Go name through the generated type table, with upstream's hand-written conversions (host
 * namespace flags moved into the pod security context, `serviceAccount` as an alias, negative
 * grace periods, init-container annotations, `podIP`). Quantities and int-or-strings become
 * their Go structs.
 *
 * @module
 */

import { type GoType, goType, v1Counterpart } from "./go_type.ts";
import { DecodedQuantity, parseGoQuantity } from "./go_quantity.ts";
import { quantityForHash } from "./quantity_json.ts";

type Json = Record<string, unknown>;

/** Annotation keys upstream drops in the v1 ↔ internal pod conversion. */
export const INIT_CONTAINER_ANNOTATIONS = [
  "pod.beta.kubernetes.io/init-containers",
  "pod.alpha.kubernetes.io/init-containers",
  "pod.beta.kubernetes.io/init-container-statuses",
  "pod.alpha.kubernetes.io/init-container-statuses",
];

/** The `core.Pod` Go value of a v1 pod. */
export function toCorePod(pod: Json): Json {
  return convert("core.Pod", pod) as Json;
}

function convert(typeName: string, value: unknown): unknown {
  const t = goType(typeName);
  switch (t.kind) {
    case "ptr":
      return value === null || value === undefined
        ? null
        : convert(t.elem!, value);
    case "slice":
      return Array.isArray(value)
        ? value.map((item) => convert(t.elem!, item))
        : null;
    case "map": {
      if (value === null || value === undefined) return null;
      const out: Json = {};
      for (const [k, v] of Object.entries(value as Json)) {
        out[k] = convert(t.elem!, v);
      }
      return out;
    }
    case "struct":
      return convertStruct(t, value);
    default:
      return value;
  }
}

function convertStruct(t: GoType, value: unknown): unknown {
  if (t.name === "resource.Quantity") {
    if (value instanceof DecodedQuantity) return quantityForHash(value.q);
    return typeof value === "string"
      ? quantityForHash(parseGoQuantity(value))
      : undefined;
  }
  if (t.name === "intstr.IntOrString") {
    if (typeof value === "string") return { Type: 1, StrVal: value };
    return { Type: 0, IntVal: typeof value === "number" ? value : 0 };
  }
  if (t.name === "v1.Time") {
    // A set timestamp would hash the host's local time zone; manifests carry null.
    return undefined;
  }
  if (value === null || value === undefined) return undefined;
  const json = value as Json;
  const v1Name = t.name.startsWith("core.") ? v1Counterpart(t.name) : t.name;
  const v1Fields = new Map(
    (v1Name ? goType(v1Name).fields ?? [] : []).map((f) => [f.name, f]),
  );
  const out: Json = {};
  for (const f of t.fields ?? []) {
    const source = v1Fields.get(f.name);
    if (!source) continue;
    const raw = source.inline || (source.embedded && !source.json)
      ? json
      : json[source.json!];
    out[f.name] = convert(f.type, raw);
  }
  if (t.name === "core.PodSpec") fixPodSpec(json, out);
  if (t.name === "core.Pod") fixPod(json, out);
  if (t.name === "core.PodStatus") fixPodStatus(json, out);
  if (t.name === "core.ServiceAccountTokenProjection") {
    out.ExpirationSeconds ??= 0;
  }
  return out;
}

/** Upstream `Convert_v1_PodSpec_To_core_PodSpec`. */
function fixPodSpec(spec: Json, out: Json): void {
  if (!spec.serviceAccountName) out.ServiceAccountName = spec.serviceAccount;
  const sc = (out.SecurityContext ?? {}) as Json;
  sc.HostNetwork = spec.hostNetwork;
  sc.HostPID = spec.hostPID;
  sc.HostIPC = spec.hostIPC;
  sc.ShareProcessNamespace = spec.shareProcessNamespace ?? null;
  sc.HostUsers = spec.hostUsers ?? null;
  out.SecurityContext = sc;
}

/** Upstream `Convert_v1_Pod_To_core_Pod`. */
function fixPod(pod: Json, out: Json): void {
  const meta = out.ObjectMeta as Json | undefined;
  const annotations = meta?.Annotations as Json | null | undefined;
  if (
    meta && annotations &&
    INIT_CONTAINER_ANNOTATIONS.some((k) => k in annotations)
  ) {
    const kept: Json = {};
    for (const [k, v] of Object.entries(annotations)) {
      if (!INIT_CONTAINER_ANNOTATIONS.includes(k)) kept[k] = v;
    }
    meta.Annotations = kept;
  }
  const grace = (pod.spec as Json | undefined)?.terminationGracePeriodSeconds;
  if (typeof grace === "number" && grace < 0) {
    (out.Spec as Json).TerminationGracePeriodSeconds = 1;
  }
}

/** Upstream `Convert_v1_PodStatus_To_core_PodStatus`. */
function fixPodStatus(status: Json, out: Json): void {
  const podIP = typeof status.podIP === "string" ? status.podIP : "";
  const podIPs = Array.isArray(status.podIPs) ? status.podIPs as Json[] : [];
  if (podIP && podIPs.length > 0 && podIP !== podIPs[0]?.ip) {
    out.PodIPs = [{ IP: podIP }];
  }
  if (podIP && podIPs.length === 0) out.PodIPs = [{ IP: podIP }];
}
