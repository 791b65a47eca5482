/**
 * Static pod manifests read exactly as the upstream kubelet reads them: typed decoding into
 * v1.Pod, the API defaults, upstream's UID (MD5 of the spew print of the internal pod), the
 * static pod defaults, pod validation and the API reference check.
 *
 * @module
 */

export {
  type ManifestFailureClass,
  type ManifestResult,
  type ManifestSource,
  readManifest,
  readManifestValue,
} from "./read_manifest.ts";
export type { FieldError } from "./validate_pod.ts";
