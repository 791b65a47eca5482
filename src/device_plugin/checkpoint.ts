/**
 * The device manager's checkpoint, `/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint`,
 * in upstream's format so that swapping the binary keeps allocations both ways:
 * `{"Data":{"PodDeviceEntries":[{PodUID,ContainerName,ResourceName,DeviceIDs:{"<numa>":[ids]},
 * AllocResp:"<base64 protobuf>"}],"RegisteredDevices":{"<resource>":[ids]}},"Checksum":N}`,
 * the checksum being FNV-1a 32 over spew's `%#v` print of the data (upstream `checksum.New`).
 *
 * @module
 */

import { fnv32a } from "../pod/mod.ts";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ContainerAllocateResponseSchema } from "./gen/deviceplugin_pb.ts";
import type { ContainerResponse, DeviceEntry } from "./pod_devices.ts";

/** What the checkpoint holds. */
export interface CheckpointData {
  entries: DeviceEntry[];
  registered: Map<string, string[]>;
}

interface EntryJson {
  PodUID: string;
  ContainerName: string;
  ResourceName: string;
  DeviceIDs: Record<string, string[]> | null;
  AllocResp: string | null;
}

/** Go's order of map keys when it sorts them (integers numerically, strings bytewise). */
function byKey<T>(
  a: readonly [T, unknown],
  b: readonly [T, unknown],
): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/** The plugin answer as the protobuf bytes upstream keeps. */
export function responseBytes(
  response: ContainerResponse | undefined,
): Uint8Array {
  if (!response) return new Uint8Array(0);
  return toBinary(
    ContainerAllocateResponseSchema,
    create(ContainerAllocateResponseSchema, {
      envs: response.envs,
      mounts: response.mounts,
      devices: response.devices,
      annotations: response.annotations,
      cdiDevices: response.cdiDevices,
    }),
  );
}

/** Protobuf bytes of a `ContainerAllocateResponse` as the container's parts. */
export function responseFromBytes(bytes: Uint8Array): ContainerResponse {
  const r = fromBinary(ContainerAllocateResponseSchema, bytes);
  return {
    envs: { ...r.envs },
    mounts: r.mounts.map((m) => ({
      containerPath: m.containerPath,
      hostPath: m.hostPath,
      readOnly: m.readOnly,
    })),
    devices: r.devices.map((d) => ({
      containerPath: d.containerPath,
      hostPath: d.hostPath,
      permissions: d.permissions,
    })),
    annotations: { ...r.annotations },
    cdiDevices: r.cdiDevices.map((c) => ({ name: c.name })),
  };
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** spew's `%#v` of upstream's `checkpointData` (the checksum's input). */
export function spewCheckpointData(
  entries: { json: EntryJson; bytes: Uint8Array }[],
  registered: [string, string[]][],
): string {
  const list = (ids: string[]) => `[${ids.join(" ")}]`;
  const entryText = (
    { json, bytes }: { json: EntryJson; bytes: Uint8Array },
  ) => {
    const numa = json.DeviceIDs === null
      ? "<nil>"
      : `map[${
        Object.entries(json.DeviceIDs).map(([k, v]) => [Number(k), v] as const)
          .sort(byKey).map(([k, v]) => `${k}:${list(v)}`).join(" ")
      }]`;
    const resp = json.AllocResp === null
      ? "<nil>"
      : `[${[...bytes].join(" ")}]`;
    return `{PodUID:(string)${json.PodUID} ContainerName:(string)${json.ContainerName} ResourceName:(string)${json.ResourceName} DeviceIDs:(checkpoint.DevicesPerNUMA)${numa} AllocResp:([]uint8)${resp}}`;
  };
  const podEntries = entries.length === 0
    ? "<nil>"
    : `[${entries.map(entryText).join(" ")}]`;
  const devices = `map[${
    [...registered].sort(byKey).map(([r, ids]) => `${r}:${list(ids)}`).join(" ")
  }]`;
  return `(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)${podEntries} RegisteredDevices:(map[string][]string)${devices}}`;
}

/**
 * Go's JSON of a `map[int64][]string`: keys as strings in string order (a
 * JavaScript object would put "0" before "-1").
 */
function numaJson(ids: Map<number, string[]>): string {
  const keys = [...ids.keys()].map(String).sort();
  return `{${
    keys.map((k) =>
      `${JSON.stringify(k)}:${JSON.stringify(ids.get(Number(k)))}`
    )
      .join(",")
  }}`;
}

/** The checkpoint file's text. */
export function encodeDeviceCheckpoint(data: CheckpointData): string {
  const entries = data.entries.map((e) => {
    const bytes = responseBytes(e.response);
    const json: EntryJson = {
      PodUID: e.podUid,
      ContainerName: e.containerName,
      ResourceName: e.resource,
      DeviceIDs: Object.fromEntries(
        [...e.deviceIds].map(([k, v]) => [String(k), v]),
      ),
      AllocResp: base64(bytes),
    };
    return { json, bytes, numa: numaJson(e.deviceIds) };
  });
  const registered = [...data.registered].sort(byKey);
  const checksum = fnv32a(
    new TextEncoder().encode(spewCheckpointData(entries, registered)),
  );
  const entryJson = entries.map(({ json, numa }) =>
    `{"PodUID":${JSON.stringify(json.PodUID)},"ContainerName":${
      JSON.stringify(json.ContainerName)
    },"ResourceName":${
      JSON.stringify(json.ResourceName)
    },"DeviceIDs":${numa},"AllocResp":${JSON.stringify(json.AllocResp)}}`
  );
  return `{"Data":{"PodDeviceEntries":${
    entries.length ? `[${entryJson.join(",")}]` : "null"
  },"RegisteredDevices":${
    JSON.stringify(Object.fromEntries(registered))
  }},"Checksum":${checksum}}`;
}

/**
 * Parses the checkpoint; throws a TypeError naming `file` when it is not one
 * or its checksum does not match.
 */
export function decodeDeviceCheckpoint(
  text: string,
  file: string,
): CheckpointData {
  let outer: {
    Data?: {
      PodDeviceEntries?: EntryJson[] | null;
      RegisteredDevices?: Record<string, string[] | null> | null;
    };
    Checksum?: number;
  };
  try {
    outer = JSON.parse(text);
  } catch (cause) {
    throw new TypeError(`${file}: not a JSON checkpoint`, { cause });
  }
  const d = outer?.Data;
  if (
    typeof d !== "object" || d === null || typeof outer.Checksum !== "number"
  ) {
    throw new TypeError(
      `${file}: expected {"Data": {...}, "Checksum": N}; remove the file to start afresh`,
    );
  }
  const entries = (d.PodDeviceEntries ?? []).map((json) => ({
    json,
    bytes: json.AllocResp === null
      ? new Uint8Array(0)
      : fromBase64(json.AllocResp),
  }));
  const registered = Object.entries(d.RegisteredDevices ?? {}).map((
    [r, ids],
  ) => [r, ids ?? []] as [string, string[]]).sort(byKey);
  const sum = fnv32a(
    new TextEncoder().encode(spewCheckpointData(entries, registered)),
  );
  if (sum !== outer.Checksum) {
    throw new TypeError(
      `${file}: checksum mismatch (the file was changed or cut short); remove it to start afresh`,
    );
  }
  return {
    entries: entries.map(({ json, bytes }) => ({
      podUid: json.PodUID,
      containerName: json.ContainerName,
      resource: json.ResourceName,
      deviceIds: new Map(
        Object.entries(json.DeviceIDs ?? {}).map(([k, v]) => [Number(k), v]),
      ),
      response: responseFromBytes(bytes),
    })),
    registered: new Map(registered),
  };
}
