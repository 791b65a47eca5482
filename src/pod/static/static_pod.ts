/**
 * Static pod manifests as the sources see them: the pods a file or URL defines, read by the one
 * engine in `src/static_pod/` (upstream's decoding, defaults, `ValidatePodCreate` and UID), with
 * the source annotation the pod config adds, the problems as {@linkcode ManifestError}s naming
 * the file and field, and the duplicate-name filter.
 *
 * @module
 */

import { readManifest, readManifestValue } from "../../static_pod/mod.ts";
import { readYaml } from "../../util/yaml.ts";
import type { Pod } from "../types.ts";

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

/** What one manifest text yields: the valid pods, the problems, and notes worth a log line. */
export interface ParsedManifest {
  pods: Pod[];
  errors: ManifestError[];
  /** Things that did not stop the pods, such as ignored extra YAML documents. */
  warnings: string[];
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
