/**
 * The files of a downwardAPI volume (and of projected downwardAPI sources), computed from the
 * pod (pure): upstream's volume field paths (`metadata.name`, `metadata.namespace`,
 * `metadata.uid`, `metadata.labels`, `metadata.annotations` and single keys of the last two)
 * and `resourceFieldRef` values divided by their divisor and rounded up, with the node's
 * allocatable standing in for an unset limit.
 *
 * @module
 */

import type { Pod } from "../api/mod.ts";
import { milliValue, quantityValue } from "../util/quantity.ts";
import type { PayloadFile } from "./atomic_writer.ts";
import type { DownwardApiItem } from "./volume_sources.ts";

/** Node allocatable used for unset limits (upstream `MergeContainerResourceLimits`). */
export interface NodeAllocatable {
  /** Millicores. */
  cpuMillis?: number;
  /** Bytes. */
  memoryBytes?: number;
  /** Bytes. */
  ephemeralStorageBytes?: number;
}

/** Upstream `FormatMap`: sorted `key="value"` lines (Go %q quoting). */
export function formatMap(map: Readonly<Record<string, string>>): string {
  return Object.keys(map).sort().map((k) => `${k}=${JSON.stringify(map[k])}`)
    .join("\n");
}

const SUBSCRIPT_REGEXP = /^metadata\.(labels|annotations)\['([^']*)'\]$/;

/**
 * The pod metadata a fieldRef names, shared by env vars and downwardAPI volumes: name,
 * namespace, uid and one label or annotation key; undefined for any other path.
 */
export function podMetadataField(
  pod: Pod,
  fieldPath: string,
): string | undefined {
  const sub = SUBSCRIPT_REGEXP.exec(fieldPath);
  if (sub) {
    const map = sub[1] === "labels"
      ? pod.metadata.labels
      : pod.metadata.annotations;
    return map?.[sub[2]!] ?? "";
  }
  switch (fieldPath) {
    case "metadata.name":
      return pod.metadata.name ?? "";
    case "metadata.namespace":
      return pod.metadata.namespace ?? "default";
    case "metadata.uid":
      return pod.metadata.uid ?? "";
  }
  return undefined;
}

function fieldValue(pod: Pod, fieldPath: string, field: string): string {
  const value = podMetadataField(pod, fieldPath);
  if (value !== undefined) return value;
  // only volumes may hold whole maps
  switch (fieldPath) {
    case "metadata.labels":
      return formatMap(pod.metadata.labels ?? {});
    case "metadata.annotations":
      return formatMap(pod.metadata.annotations ?? {});
  }
  throw new RangeError(
    `${field}: unsupported field path "${fieldPath}" for a volume; use metadata.name, metadata.namespace, metadata.uid, metadata.labels, metadata.annotations or a single key of the last two`,
  );
}

const RESOURCE_REGEXP =
  /^(limits|requests)\.(cpu|memory|ephemeral-storage|hugepages-.+)$/;

function resourceValue(
  pod: Pod,
  ref: NonNullable<DownwardApiItem["resourceFieldRef"]>,
  field: string,
  node: NodeAllocatable,
): string {
  const m = RESOURCE_REGEXP.exec(ref.resource);
  if (!m) {
    throw new RangeError(
      `${field}.resource: unsupported resource "${ref.resource}"; use limits.cpu, limits.memory, limits.ephemeral-storage, requests.* or hugepages`,
    );
  }
  const container = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]
    .find((c) => c.name === ref.containerName);
  if (!container) {
    throw new RangeError(
      `${field}.containerName: container "${
        ref.containerName ?? ""
      }" not found in the pod; name one of its containers`,
    );
  }
  const kind = m[1] as "limits" | "requests";
  const name = m[2]!;
  let value = container.resources?.[kind]?.[name];
  if (value === undefined && kind === "limits") {
    const fallback = name === "cpu"
      ? `${node.cpuMillis ?? 0}m`
      : name === "memory"
      ? node.memoryBytes
      : name === "ephemeral-storage"
      ? node.ephemeralStorageBytes
      : undefined;
    value = fallback ?? 0;
  }
  // the API server sends an unset divisor as "0"; upstream then divides by one unit
  const divisor = milliValue(ref.divisor ?? 0) === 0 ? "1" : ref.divisor!;
  if (name === "cpu") {
    const d = milliValue(divisor) || 1;
    return String(Math.ceil(milliValue(value ?? 0) / d));
  }
  const d = quantityValue(divisor) || 1;
  return String(Math.ceil(quantityValue(value ?? 0) / d));
}

/**
 * The payload of a downwardAPI volume for `pod`.
 * @throws {RangeError} naming the item field that cannot be resolved.
 */
export function downwardApiPayload(
  pod: Pod,
  volume: {
    name: string;
    items: readonly DownwardApiItem[];
    defaultMode: number;
  },
  options: { node?: NodeAllocatable } = {},
): Map<string, PayloadFile & { data: string }> {
  const out = new Map<string, PayloadFile & { data: string }>();
  for (const [i, item] of volume.items.entries()) {
    const field = `volume "${volume.name}" items[${i}]`;
    let data: string;
    if (item.fieldRef) data = fieldValue(pod, item.fieldRef.fieldPath, field);
    else if (item.resourceFieldRef) {
      data = resourceValue(
        pod,
        item.resourceFieldRef,
        `${field}.resourceFieldRef`,
        options.node ?? {},
      );
    } else {
      throw new RangeError(`${field}: needs a fieldRef or a resourceFieldRef`);
    }
    out.set(item.path, { data, mode: item.mode ?? volume.defaultMode });
  }
  return out;
}
