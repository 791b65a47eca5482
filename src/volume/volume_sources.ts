/**
 * Reads a pod's `spec.volumes` into typed sources (pure). The sources this kubelet sets up are
 * emptyDir, hostPath, downwardAPI and projected volumes whose sources are all downwardAPI;
 * everything else is reported as unsupported here (the API-backed ones are set up by wrappers
 * when the kubelet has an API server), so the pod fails to mount with a reason instead of
 * starting without its data.
 *
 * @module
 */

import type { Pod } from "../api/mod.ts";

/** One `downwardAPI` item (also inside `projected.sources[].downwardAPI`). */
export interface DownwardApiItem {
  path: string;
  fieldRef?: { fieldPath: string; apiVersion?: string };
  resourceFieldRef?: {
    containerName?: string;
    resource: string;
    divisor?: string | number;
  };
  mode?: number;
}

/** The volume sources the kubelet acts on. */
export type VolumeSource =
  | { kind: "emptyDir"; medium: "" | "Memory"; sizeLimit?: string }
  | { kind: "hostPath"; path: string; type: string }
  | { kind: "downwardAPI"; items: DownwardApiItem[]; defaultMode: number }
  | { kind: "unsupported"; source: string };

/** A pod volume with its source. */
export interface PodVolume {
  name: string;
  source: VolumeSource;
}

/** Upstream default file mode of downwardAPI and projected volumes (0644). */
export const DEFAULT_VOLUME_FILE_MODE = 0o644;

/** A volume whose spec cannot be used (bad field), with the field path. */
export class VolumeSpecError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "VolumeSpecError";
    this.field = field;
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function items(value: unknown, field: string): DownwardApiItem[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new VolumeSpecError(field, "must be a list of {path, fieldRef}");
  }
  return value.map((item, i) => {
    if (!isObject(item) || typeof item.path !== "string") {
      throw new VolumeSpecError(`${field}[${i}].path`, "is required");
    }
    return item as unknown as DownwardApiItem;
  });
}

function mode(value: unknown, field: string): number {
  if (value === undefined) return DEFAULT_VOLUME_FILE_MODE;
  if (
    typeof value !== "number" || !Number.isInteger(value) || value < 0 ||
    value > 0o777
  ) {
    throw new VolumeSpecError(
      field,
      `must be a number between 0 and 0777 (octal), both inclusive`,
    );
  }
  return value;
}

/** The source keys this kubelet reads, besides `name`. */
const HANDLED = new Set(["emptyDir", "hostPath", "downwardAPI", "projected"]);

function projected(source: Json, field: string): VolumeSource {
  const out: DownwardApiItem[] = [];
  const sources = source.sources ?? [];
  if (!Array.isArray(sources)) {
    throw new VolumeSpecError(`${field}.sources`, "must be a list");
  }
  for (const [i, s] of sources.entries()) {
    if (!isObject(s)) continue;
    const kinds = Object.keys(s);
    const other = kinds.find((k) => k !== "downwardAPI");
    if (other) return { kind: "unsupported", source: `projected ${other}` };
    out.push(
      ...items(
        (s.downwardAPI as Json | undefined)?.items,
        `${field}.sources[${i}].downwardAPI.items`,
      ),
    );
  }
  return {
    kind: "downwardAPI",
    items: out,
    defaultMode: mode(source.defaultMode, `${field}.defaultMode`),
  };
}

function readSource(volume: Json, field: string): VolumeSource {
  const keys = Object.keys(volume).filter((k) => k !== "name");
  if (keys.length === 0) {
    // the API defaults a volume without a source to an emptyDir
    return { kind: "emptyDir", medium: "" };
  }
  const key = keys.find((k) => HANDLED.has(k));
  if (!key) return { kind: "unsupported", source: keys[0]! };
  const source = volume[key];
  if (!isObject(source)) {
    throw new VolumeSpecError(`${field}.${key}`, "must be an object");
  }
  switch (key) {
    case "emptyDir": {
      const medium = source.medium ?? "";
      if (medium !== "" && medium !== "Memory") {
        throw new VolumeSpecError(
          `${field}.emptyDir.medium`,
          `unsupported medium "${medium}"; use "" (node disk) or "Memory"`,
        );
      }
      return {
        kind: "emptyDir",
        medium,
        ...(source.sizeLimit !== undefined
          ? { sizeLimit: String(source.sizeLimit) }
          : {}),
      };
    }
    case "hostPath":
      if (typeof source.path !== "string" || source.path === "") {
        throw new VolumeSpecError(`${field}.hostPath.path`, "is required");
      }
      return {
        kind: "hostPath",
        path: source.path,
        type: typeof source.type === "string" ? source.type : "",
      };
    case "downwardAPI":
      return {
        kind: "downwardAPI",
        items: items(source.items, `${field}.downwardAPI.items`),
        defaultMode: mode(
          source.defaultMode,
          `${field}.downwardAPI.defaultMode`,
        ),
      };
    default:
      return projected(source, `${field}.projected`);
  }
}

/**
 * The pod's volumes with their sources.
 * @throws {VolumeSpecError} naming the field of a malformed volume.
 */
export function podVolumes(pod: Pod): PodVolume[] {
  return (pod.spec.volumes ?? []).map((volume, i) => ({
    name: volume.name,
    source: readSource(
      volume as unknown as Json,
      `spec.volumes[${i}]`,
    ),
  }));
}

/** Sources whose data comes from API objects: a kubelet without an API server cannot set them up. */
const API_BACKED = new Set([
  "configMap",
  "secret",
  "persistentVolumeClaim",
  "ephemeral",
  "csi",
]);

/**
 * The FailedMount message for a source this volume manager does not set up (upstream's
 * `MountVolume.SetUp failed for volume "x" : ...` wording): API-backed sources on a kubelet
 * without an API server, and in-tree sources that need a mount the kubelet cannot make.
 */
export function unsupportedSourceMessage(
  name: string,
  source: string,
): string {
  const kind = source.split(" ")[0]!;
  const why = API_BACKED.has(kind) || source.startsWith("projected ")
    ? `${source} volumes need objects from the API server, and this kubelet runs without one (set --kubeconfig); use emptyDir, hostPath or downwardAPI`
    : `${source} volumes are not supported by this kubelet: it mounts no file systems itself (no mount(8) under its permissions); use a CSI driver, a persistentVolumeClaim, emptyDir or hostPath (docs/volumes.md)`;
  return `MountVolume.SetUp failed for volume "${name}" : ${why}`;
}
