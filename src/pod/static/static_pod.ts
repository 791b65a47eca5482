/**
 * Static pod manifests: parsing (YAML or JSON through the one YAML reader, so `hostNetwork:
 * yes` is true as in the upstream kubelet; one pod per manifest, a `PodList` only from an URL),
 * a small structural validation that names the offending field, and the static-pod defaulting
 * the kubelet applies to pods that come from a file or an URL (name suffix, namespace, UID
 * derived from the content, config annotations).
 *
 * @module
 */

import { readManifest, readManifestValue } from "../../static_pod/mod.ts";
import { readYaml } from "../../util/yaml.ts";
import type { Container, Pod } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Which kind of static source a pod came from (`kubernetes.io/config.source`). */
export type StaticSourceKind = "file" | "http";

/** Annotation keys the kubelet stamps on pods it reads from its sources. */
export const CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source";
/** Hash of the static pod (equals its UID). */
export const CONFIG_HASH_ANNOTATION = "kubernetes.io/config.hash";
/** RFC 3339 time the kubelet first saw the pod. */
export const CONFIG_SEEN_ANNOTATION = "kubernetes.io/config.seen";
/** Present on mirror pods only (API copies of static pods); carries the static pod's hash. */
export const CONFIG_MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

/** An unparsable or invalid manifest; `origin` is the file or URL, `field` the JSON path. */
export class ManifestError extends SyntaxError {
  readonly origin: string;
  readonly field: string;
  readonly line: number | undefined;
  constructor(
    message: string,
    options: { origin: string; field?: string; line?: number; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.name = "ManifestError";
    this.origin = options.origin;
    this.field = options.field ?? "";
    this.line = options.line;
  }
}

/** Result of reading one manifest text: the valid pods, the problems, and notes worth a log line. */
export interface ParsedManifest {
  pods: Pod[];
  errors: ManifestError[];
  /** Things that did not stop the pods, such as ignored extra YAML documents. */
  warnings: string[];
}

/** Options of {@linkcode parseManifest}. */
export interface ParseManifestOptions {
  /** File path or URL, for messages. */
  origin: string;
  /**
   * Accept a `PodList`/`List` as well as a single Pod. Upstream's URL source does (it tries a
   * PodList when the body is not a single pod, `pkg/kubelet/config/http.go`); its file source
   * decodes a single pod only (`tryDecodeSinglePod` in `file.go`).
   */
  allowPodList?: boolean;
}

/** Upper bound on the total size of a pod's annotation keys and values (upstream `TotalAnnotationSizeLimitB`). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

const DNS_LABEL_REGEXP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN_REGEXP =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RESTART_POLICIES = ["Always", "OnFailure", "Never"];
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];

/**
 * Parses a manifest text (YAML or JSON) into its pod. Like upstream, which converts the text
 * with `sigs.k8s.io/yaml` and decodes one object, only the first YAML document is read (a
 * warning names the ignored rest), and the object must be a Pod (or, with `allowPodList`, a
 * `PodList`/`List` of pods). An empty manifest holds no pods. Invalid pods become errors; the
 * valid ones are still returned.
 */
export async function parseManifest(
  text: string,
  options: ParseManifestOptions,
): Promise<ParsedManifest> {
  const { origin } = options;
  const pods: Pod[] = [];
  const errors: ManifestError[] = [];
  const warnings: string[] = [];
  let read;
  try {
    read = await readYaml(text);
  } catch (cause) {
    const message = errorMessage(cause);
    const line = Number(/^yaml: line (\d+)/.exec(message)?.[1]) || undefined;
    errors.push(
      new ManifestError(`Cannot parse manifest "${origin}": ${message}`, {
        origin,
        ...(line ? { line } : {}),
        cause,
      }),
    );
    return { pods, errors, warnings };
  }
  if (read.documents > 1) {
    warnings.push(
      `Manifest "${origin}" holds ${read.documents} YAML documents; only the first is read, one pod per manifest as upstream`,
    );
  }
  if (read.value === null || read.value === undefined) {
    return { pods, errors, warnings };
  }
  collectPods(read.value, {
    origin,
    pods,
    errors,
    allowPodList: options.allowPodList ?? false,
  });
  return { pods, errors, warnings };
}

function collectPods(
  value: unknown,
  ctx: {
    origin: string;
    pods: Pod[];
    errors: ManifestError[];
    allowPodList: boolean;
  },
): void {
  if (
    ctx.allowPodList && isRecord(value) &&
    (value.kind === "PodList" || value.kind === "List")
  ) {
    const items = Array.isArray(value.items) ? value.items : [];
    items.forEach((item, i) => {
      const result = validatePod(item, {
        origin: ctx.origin,
        path: `items[${i}]`,
      });
      if (result instanceof ManifestError) ctx.errors.push(result);
      else ctx.pods.push(result);
    });
    return;
  }
  const result = validatePod(value, { origin: ctx.origin });
  if (result instanceof ManifestError) ctx.errors.push(result);
  else ctx.pods.push(result);
}

/**
 * Checks that `value` has the shape of a core/v1 Pod the kubelet can run. Returns the pod (the
 * same object) or a {@linkcode ManifestError} naming the first offending field.
 */
export function validatePod(
  value: unknown,
  options: { origin: string; path?: string },
): Pod | ManifestError {
  const base = options.path ?? "";
  const fail = (field: string, problem: string): ManifestError => {
    const full = joinPath(base, field);
    return new ManifestError(
      `Invalid pod manifest "${options.origin}": field "${full}" ${problem}`,
      { origin: options.origin, field: full },
    );
  };
  if (!isRecord(value)) return fail("", "must be an object (a Pod)");
  if (value.kind !== undefined && value.kind !== "Pod") {
    return fail("kind", `must be "Pod", got ${JSON.stringify(value.kind)}`);
  }
  if (value.apiVersion !== undefined && value.apiVersion !== "v1") {
    return fail(
      "apiVersion",
      `must be "v1", got ${JSON.stringify(value.apiVersion)}`,
    );
  }
  const metadata = value.metadata;
  if (!isRecord(metadata)) return fail("metadata", "is required");
  const name = metadata.name;
  if (typeof name !== "string" || name === "") {
    return fail("metadata.name", "is required");
  }
  if (!DNS_SUBDOMAIN_REGEXP.test(name) || name.length > 253) {
    return fail(
      "metadata.name",
      `must be a lower-case DNS subdomain, got ${JSON.stringify(name)}`,
    );
  }
  if (
    metadata.namespace !== undefined &&
    (typeof metadata.namespace !== "string" ||
      !DNS_LABEL_REGEXP.test(metadata.namespace))
  ) {
    return fail("metadata.namespace", "must be a lower-case DNS label");
  }
  for (const key of ["labels", "annotations"] as const) {
    const map = metadata[key];
    if (map === undefined) continue;
    if (!isRecord(map)) return fail(`metadata.${key}`, "must be a map");
    for (const [k, v] of Object.entries(map)) {
      if (typeof v !== "string") {
        return fail(`metadata.${key}.${k}`, "must be a string");
      }
    }
  }
  const annotationBytes = annotationSize(metadata.annotations);
  if (annotationBytes > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) {
    // Upstream ValidateAnnotations (apimachinery objectmeta.go) reports field.TooLong.
    return fail(
      "metadata.annotations",
      `is too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT_BYTES} bytes (keys and values total ${annotationBytes})`,
    );
  }
  const spec = value.spec;
  if (!isRecord(spec)) return fail("spec", "is required");
  if (
    spec.restartPolicy !== undefined &&
    !RESTART_POLICIES.includes(String(spec.restartPolicy))
  ) {
    return fail(
      "spec.restartPolicy",
      `must be one of Always, OnFailure, Never, got ${
        JSON.stringify(spec.restartPolicy)
      }`,
    );
  }
  if (
    spec.terminationGracePeriodSeconds !== undefined &&
    (typeof spec.terminationGracePeriodSeconds !== "number" ||
      spec.terminationGracePeriodSeconds < 0)
  ) {
    return fail(
      "spec.terminationGracePeriodSeconds",
      "must be a non-negative integer",
    );
  }
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) {
    return fail("spec.containers", "must list at least one container");
  }
  const names = new Set<string>();
  for (const key of ["initContainers", "containers"] as const) {
    const list = spec[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return fail(`spec.${key}`, "must be a list");
    for (let i = 0; i < list.length; i++) {
      const problem = checkContainer(list[i], names);
      if (problem) return fail(`spec.${key}[${i}]${problem[0]}`, problem[1]);
    }
  }
  return value as unknown as Pod;
}

function checkContainer(
  c: unknown,
  names: Set<string>,
): [string, string] | undefined {
  if (!isRecord(c)) return ["", "must be an object"];
  if (typeof c.name !== "string" || c.name === "") {
    return [".name", "is required"];
  }
  if (!DNS_LABEL_REGEXP.test(c.name) || c.name.length > 63) {
    return [".name", `must be a lower-case DNS label, got "${c.name}"`];
  }
  if (names.has(c.name)) return [".name", `duplicates "${c.name}"`];
  names.add(c.name);
  if (typeof c.image !== "string" || c.image.trim() === "") {
    return [".image", "is required"];
  }
  if (
    c.imagePullPolicy !== undefined &&
    !PULL_POLICIES.includes(String(c.imagePullPolicy))
  ) {
    return [".imagePullPolicy", "must be one of Always, IfNotPresent, Never"];
  }
  for (const key of ["command", "args"] as const) {
    const v = c[key];
    if (
      v !== undefined &&
      (!Array.isArray(v) || v.some((s) => typeof s !== "string"))
    ) {
      return [`.${key}`, "must be a list of strings"];
    }
  }
  return undefined;
}

/**
 * Applies the API server's defaults that the kubelet relies on (restart policy, grace period,
 * DNS policy, pull policy, termination message path/policy, requests from limits). Returns a
 * new object.
 */
export function applyApiDefaults(pod: Pod): Pod {
  const out = structuredClone(pod);
  const spec = out.spec;
  spec.restartPolicy ??= "Always";
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= "ClusterFirst";
  const fix = (c: Container) => {
    c.imagePullPolicy ??= defaultPullPolicy(c.image ?? "");
    c.terminationMessagePath ??= "/dev/termination-log";
    c.terminationMessagePolicy ??= "File";
    for (const p of c.ports ?? []) p.protocol ??= "TCP";
    // upstream SetDefaults_Pod: a resource with a limit and no request requests its limit
    const limits = c.resources?.limits;
    if (c.resources && limits) {
      const requests = c.resources.requests ??= {};
      for (const [name, value] of Object.entries(limits)) {
        requests[name] ??= value;
      }
    }
  };
  spec.containers.forEach(fix);
  spec.initContainers?.forEach(fix);
  return out;
}

/** `Always` for `:latest` or untagged images (no digest), else `IfNotPresent`. */
export function defaultPullPolicy(image: string): "Always" | "IfNotPresent" {
  if (image.includes("@")) return "IfNotPresent";
  const lastSlash = image.lastIndexOf("/");
  const tail = image.slice(lastSlash + 1);
  const colon = tail.lastIndexOf(":");
  if (colon < 0) return "Always";
  return tail.slice(colon + 1) === "latest" ? "Always" : "IfNotPresent";
}

/** Options of {@linkcode applyStaticPodDefaults}. */
export interface StaticPodDefaultsOptions {
  /** The node name (already lower-cased). */
  nodeName: string;
  source: StaticSourceKind;
  /** File path or URL the pod was read from. */
  origin: string;
}

/**
 * Turns a manifest pod into the static pod the kubelet runs, exactly as upstream does (see
 * `src/static_pod/`): typed decoding, API defaults, UID = MD5 of upstream's spew print of the
 * internal pod plus the node and file path or URL (unless the manifest sets one), name
 * `<name>-<nodeName>`, namespace `default`, `spec.nodeName`, the config hash annotation, for file
 * pods a toleration of every `NoExecute` taint; then the source annotation the pod config adds.
 * Throws a {@linkcode ManifestError} when upstream would refuse the pod.
 */
export function applyStaticPodDefaults(
  pod: Pod,
  options: StaticPodDefaultsOptions,
): Pod {
  const value = { apiVersion: "v1", kind: "Pod", ...structuredClone(pod) };
  const result = readManifestValue(value, {
    source: options.source,
    origin: options.origin,
    nodeName: options.nodeName,
  });
  if (!result.ok) {
    throw new ManifestError(
      `Invalid pod manifest "${options.origin}": ${result.message}`,
      { origin: options.origin },
    );
  }
  return withSourceAnnotation(result.pods[0] as unknown as Pod, options.source);
}

function withSourceAnnotation(pod: Pod, source: StaticSourceKind): Pod {
  pod.metadata.annotations = {
    ...pod.metadata.annotations,
    [CONFIG_SOURCE_ANNOTATION]: source,
  };
  return pod;
}

/**
 * Reads `text` and returns the static pods it defines plus its problems. This is what the file
 * and HTTP sources call for each file / response body; only the HTTP source accepts a PodList.
 * Decoding, defaults, UID and validation are upstream's (`src/static_pod/`).
 */
export async function readStaticPods(
  text: string,
  options: StaticPodDefaultsOptions,
): Promise<ParsedManifest> {
  const warnings: string[] = [];
  let documents = 1;
  try {
    documents = (await readYaml(text)).documents;
  } catch { /* readManifest reports it */ }
  if (documents > 1) {
    warnings.push(
      `Manifest "${options.origin}" holds ${documents} YAML documents; only the first is read, one pod per manifest as upstream`,
    );
  }
  const result = await readManifest(text, {
    source: options.source,
    origin: options.origin,
    nodeName: options.nodeName,
  });
  if (result.ok) {
    return {
      pods: result.pods.map((p) =>
        withSourceAnnotation(p as unknown as Pod, options.source)
      ),
      errors: [],
      warnings,
    };
  }
  // An empty file holds no pods; upstream logs its decode error, we stay quiet as before.
  if (text.trim() === "" && options.source === "file") {
    return { pods: [], errors: [], warnings };
  }
  const field = result.fields?.[0]?.field;
  return {
    pods: [],
    errors: [
      new ManifestError(
        `Invalid pod manifest "${options.origin}": ${result.message}`,
        { origin: options.origin, ...(field ? { field } : {}) },
      ),
    ],
    warnings,
  };
}

/**
 * Keeps the first pod of each namespace/name and drops the later ones, with one message per
 * dropped pod, as upstream's `filterInvalidPods` (`pkg/kubelet/config/config.go`) does with
 * each source's pods.
 */
export function filterDuplicatePodNames(
  pods: Pod[],
  source: string,
): { pods: Pod[]; problems: string[] } {
  const seen = new Set<string>();
  const kept: Pod[] = [];
  const problems: string[] = [];
  for (const pod of pods) {
    const name = `${pod.metadata.namespace ?? "default"}/${pod.metadata.name}`;
    if (seen.has(name)) {
      problems.push(
        `Pod "${name}" from source "${source}" failed validation due to duplicate pod name "${pod.metadata.name}", ignoring`,
      );
      continue;
    }
    seen.add(name);
    kept.push(pod);
  }
  return { pods: kept, problems };
}

/** JSON with object keys sorted, so equal content always hashes equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => {
    if (isRecord(v) && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) sorted[k] = v[k];
      return sorted;
    }
    return v;
  });
}

/** Bytes of every annotation key and value (UTF-8, as Go's len counts them). */
function annotationSize(annotations: unknown): number {
  if (!isRecord(annotations)) return 0;
  const encoder = new TextEncoder();
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    total += encoder.encode(k).length + encoder.encode(String(v)).length;
  }
  return total;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function joinPath(base: string, field: string): string {
  if (!base) return field;
  if (!field) return base;
  return field.startsWith("[") ? `${base}${field}` : `${base}.${field}`;
}
