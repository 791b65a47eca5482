/**
 * Reads one static pod manifest the way the upstream kubelet's file and URL sources do
 * (`tryDecodeSinglePod`, `tryDecodePodList`, `applyDefaults` in `pkg/kubelet/config`): YAML to
 * JSON, typed decoding into v1.Pod, the decoder's defaults, the name check, the static pod
 * defaults (UID = MD5 of the spew print of the internal pod, then host and path or URL; name
 * suffix; namespace; node; config hash; NoExecute toleration for files), `ValidatePodCreate`
 * and the API reference check. Returns the pods or the failure with its class.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { readYaml } from "../util/yaml.ts";
import { apiObjectReference } from "./api_references.ts";
import { INIT_CONTAINER_ANNOTATIONS, toCorePod } from "./core_pod.ts";
import { decodeGo, GoDecodeError } from "./decode_v1.ts";
import { setPodDefaults } from "./pod_defaults.ts";
import { spewPrint } from "./spew_print.ts";
import { type FieldError, validatePodCreate } from "./validate_pod.ts";

type Json = Record<string, unknown>;

/** Where a manifest came from. */
export interface ManifestSource {
  /** `file` (staticPodPath) or `http` (staticPodURL). */
  source: "file" | "http";
  /** File path or URL, hashed into the UID as upstream does. */
  origin: string;
  /** Node name as given to the kubelet (lower-cased in the pod name suffix only). */
  nodeName: string;
}

/** Why a manifest was refused, in upstream's terms. */
export type ManifestFailureClass =
  | "yaml"
  | "decode"
  | "notPod"
  | "noName"
  | "validation"
  | "apiReference"
  | "empty";

/** The outcome of {@linkcode readManifest}. */
export type ManifestResult =
  | { ok: true; pods: Json[]; hashed: string[] }
  | {
    ok: false;
    class: ManifestFailureClass;
    message: string;
    fields?: FieldError[];
    hashed: string[];
  };

class Refused extends Error {
  constructor(
    readonly kind: ManifestFailureClass,
    message: string,
    readonly fields?: FieldError[],
  ) {
    super(message);
  }
}

/** Reads `text` as one manifest; a URL body may also be a `PodList`. */
export async function readManifest(
  text: string,
  source: ManifestSource,
): Promise<ManifestResult> {
  const hashed: string[] = [];
  const fail = (e: Refused): ManifestResult => ({
    ok: false,
    class: e.kind,
    message: e.message,
    ...(e.fields ? { fields: e.fields } : {}),
    hashed,
  });
  if (source.source === "http" && text.length === 0) {
    return fail(
      new Refused("empty", `zero-length data received from ${source.origin}`),
    );
  }
  let value: unknown;
  try {
    value = (await readYaml(text)).value;
  } catch (cause) {
    return fail(
      new Refused(
        "yaml",
        cause instanceof Error ? cause.message : String(cause),
      ),
    );
  }
  return readManifestValue(value, source);
}

/**
 * {@linkcode readManifest} after the YAML step: `value` is the manifest as JSON-shaped data
 * (what `sigs.k8s.io/yaml` turns the text into).
 */
export function readManifestValue(
  value: unknown,
  source: ManifestSource,
): ManifestResult {
  const hashed: string[] = [];
  const fail = (e: Refused): ManifestResult => ({
    ok: false,
    class: e.kind,
    message: e.message,
    ...(e.fields ? { fields: e.fields } : {}),
    hashed,
  });
  try {
    const meta = typeMeta(value);
    if (meta.kind === "Pod") {
      return {
        ok: true,
        pods: [finishPod(value as Json, source, hashed)],
        hashed,
      };
    }
    if (meta.kind === "PodList" && source.source === "http") {
      const list = decodeOrThrow("v1.PodList", value) as Json;
      const items = Array.isArray(list.items) ? list.items as Json[] : [];
      const pods = items.map((item) => finishDecoded(item, source, hashed));
      return { ok: true, pods, hashed };
    }
    // Another registered kind decodes into its own type first; its metadata is the part
    // shared with a pod, so its type errors are the decode errors upstream reports too.
    if (meta.kind !== "PodList" && meta.kind !== "List") {
      decodeOrThrow("v1.ObjectMeta", (value as Json).metadata ?? null);
    }
    throw new Refused(
      "notPod",
      `invalid pod: the manifest holds a ${meta.apiVersion} ${meta.kind}, not a Pod`,
    );
  } catch (cause) {
    if (cause instanceof Refused) return fail(cause);
    throw cause;
  }
}

const REGISTERED_V1_KINDS = new Set([
  "Pod",
  "PodList",
  "Service",
  "ConfigMap",
  "Secret",
  "Node",
  "Namespace",
  "Endpoints",
  "Event",
  "List",
  "PodTemplate",
  "ReplicationController",
  "ServiceAccount",
  "PersistentVolume",
  "PersistentVolumeClaim",
  "LimitRange",
  "ResourceQuota",
]);

/** The API machinery's first look: apiVersion and kind must name a registered type. */
function typeMeta(value: unknown): { apiVersion: string; kind: string } {
  const json = JSON.stringify(value);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Refused(
      "decode",
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${
        value === null
          ? "null"
          : Array.isArray(value)
          ? "array"
          : typeof value === "number"
          ? "number"
          : typeof value === "boolean"
          ? "bool"
          : "string"
      } into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  const record = value as Json;
  const str = (v: unknown, field: string) => {
    if (v === undefined || v === null) return "";
    if (typeof v !== "string") {
      throw new Refused(
        "decode",
        `couldn't get version/kind; json parse error: json: cannot unmarshal into field ${field}`,
      );
    }
    return v;
  };
  const kind = str(record.kind, "kind");
  const apiVersion = str(record.apiVersion, "apiVersion");
  if (kind === "") {
    throw new Refused("decode", `Object 'Kind' is missing in '${json}'`);
  }
  if (apiVersion === "") {
    throw new Refused("decode", `Object 'apiVersion' is missing in '${json}'`);
  }
  if (apiVersion !== "v1" || !REGISTERED_V1_KINDS.has(kind)) {
    throw new Refused(
      "decode",
      `no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/api/legacyscheme/scheme.go:30"`,
    );
  }
  return { apiVersion, kind };
}

function decodeOrThrow(typeName: string, value: unknown): unknown {
  try {
    return decodeGo(typeName, value);
  } catch (cause) {
    if (cause instanceof GoDecodeError) {
      throw new Refused("decode", cause.message);
    }
    throw cause;
  }
}

function finishPod(
  value: Json,
  source: ManifestSource,
  hashed: string[],
): Json {
  return finishDecoded(decodeOrThrow("v1.Pod", value) as Json, source, hashed);
}

/** Defaults, static pod fields, validation and the reference check of a decoded pod. */
function finishDecoded(
  pod: Json,
  source: ManifestSource,
  hashed: string[],
): Json {
  delete pod.apiVersion;
  delete pod.kind;
  setPodDefaults(pod);
  const meta = (pod.metadata ??= {}) as Json;
  if (!meta.name) {
    throw new Refused("noName", "invalid pod: name is needed for the pod");
  }
  applyStaticDefaults(pod, source, hashed);
  const errors = validatePodCreate(pod);
  if (errors.length > 0) {
    throw new Refused(
      "validation",
      `invalid pod: ${formatErrors(errors)}`,
      errors,
    );
  }
  const ref = apiObjectReference(pod);
  if ("error" in ref) throw new Refused("apiReference", ref.error);
  if (ref.resource) {
    throw new Refused(
      "apiReference",
      `static pods may not reference ${ref.resource}`,
    );
  }
  return toV1Output(pod);
}

/** Upstream `applyDefaults` (`pkg/kubelet/config/common.go`). */
function applyStaticDefaults(
  pod: Json,
  source: ManifestSource,
  hashed: string[],
): void {
  const meta = pod.metadata as Json;
  const spec = pod.spec as Json;
  if (!meta.uid) {
    const text = spewPrint("*core.Pod", toCorePod(pod));
    hashed.push(text);
    const hash = createHash("md5");
    hash.update(text);
    if (source.source === "file") {
      hash.update(`host:${source.nodeName}`);
      hash.update(`file:${source.origin}`);
    } else {
      hash.update(`url:${source.origin}`);
    }
    meta.uid = hash.digest("hex");
  }
  meta.name = `${meta.name}-${source.nodeName.toLowerCase()}`;
  if (!meta.namespace) meta.namespace = "default";
  spec.nodeName = source.nodeName;
  const annotations = (meta.annotations ??= {}) as Json;
  annotations["kubernetes.io/config.hash"] = meta.uid;
  if (source.source === "file") addNoExecuteToleration(spec);
  const status = (pod.status ??= {}) as Json;
  status.phase = "Pending";
}

/** Upstream `AddOrUpdateTolerationInPod` with `{operator: Exists, effect: NoExecute}`. */
function addNoExecuteToleration(spec: Json): void {
  const wanted = { operator: "Exists", effect: "NoExecute" };
  const current = Array.isArray(spec.tolerations)
    ? spec.tolerations as Json[]
    : [];
  const next: Json[] = [];
  let updated = false;
  for (const t of current) {
    const matches = (t.key ?? "") === "" && t.effect === "NoExecute" &&
      t.operator === "Exists" && (t.value ?? "") === "";
    if (matches) {
      if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) {
        return;
      }
      next.push({ ...wanted });
      updated = true;
      continue;
    }
    next.push(t);
  }
  if (!updated) next.push({ ...wanted });
  spec.tolerations = next;
}

/** Upstream's `%v` of a field.ErrorList: the errors in brackets, space-separated. */
function formatErrors(errors: FieldError[]): string {
  return `[${errors.map((e) => e.message).join(" ")}]`;
}

/**
 * The pod as the kubelet holds it after the internal → v1 conversion (`serviceAccount` mirrors
 * `serviceAccountName`, init-container annotations dropped, negative grace period → 1), as
 * plain JSON (quantities in their canonical text).
 */
function toV1Output(pod: Json): Json {
  const out = JSON.parse(JSON.stringify(pod)) as Json;
  const spec = out.spec as Json;
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  else if (spec.serviceAccount) {
    spec.serviceAccountName = spec.serviceAccount;
  }
  if (
    typeof spec.terminationGracePeriodSeconds === "number" &&
    spec.terminationGracePeriodSeconds < 0
  ) {
    spec.terminationGracePeriodSeconds = 1;
  }
  const annotations = (out.metadata as Json).annotations as Json | undefined;
  if (annotations) {
    for (const k of INIT_CONTAINER_ANNOTATIONS) delete annotations[k];
  }
  return out;
}
