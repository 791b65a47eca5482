/**
 * The record of a pod's user namespace, as upstream's user namespace manager keeps it in the
 * pod's directory (`<root-dir>/pods/<uid>/userns`): one UID and one GID mapping, identical,
 * container ID 0 first. The JSON is the bytes upstream's `json.Marshal` writes, so either
 * kubelet reads the other's file after a swap; reading checks what upstream's
 * `parseUserNsFileAndRecord` checks, with its texts.
 * @module
 */

/** The file's name in the pod directory (upstream `mappingsFile`). */
export const MAPPINGS_FILE = "userns";

/** One ID mapping: `length` IDs from `containerId` inside are `hostId`… outside. */
export interface IdMapping {
  hostId: number;
  containerId: number;
  length: number;
}

/** A pod's user namespace: the first host ID of its range and the range's length. */
export interface PodIdRange {
  hostId: number;
  length: number;
}

/** The file's content for a range (field order and spelling as upstream writes them). */
export function mappingsFileText(range: PodIdRange): string {
  const one = () => ({
    hostId: range.hostId,
    containerId: 0,
    length: range.length,
  });
  return JSON.stringify({ uidMappings: [one()], gidMappings: [one()] });
}

const MAX_UINT32 = 2 ** 32 - 1;

/**
 * Go's `encoding/json` into a struct: keys match case-insensitively, unknown keys are
 * ignored, an absent or null field stays zero.
 */
function field(object: Record<string, unknown>, name: string): unknown {
  const want = name.toLowerCase();
  let found: unknown;
  for (const [key, value] of Object.entries(object)) {
    if (key === name) return value;
    if (found === undefined && key.toLowerCase() === want) found = value;
  }
  return found;
}

function decodeUint32(value: unknown, at: string): number {
  if (value === undefined || value === null) return 0;
  if (
    typeof value !== "number" || !Number.isInteger(value) || value < 0 ||
    value > MAX_UINT32
  ) {
    throw new Error(
      `json: cannot unmarshal ${
        JSON.stringify(value)
      } into Go struct field ${at} of type uint32`,
    );
  }
  return value;
}

function decodeMappings(value: unknown, at: string): IdMapping[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw new Error(
      `json: cannot unmarshal ${typeof value} into Go struct field ${at} of type []userns.idMapping`,
    );
  }
  return value.map((m) => {
    if (m === null) return { hostId: 0, containerId: 0, length: 0 };
    if (typeof m !== "object" || Array.isArray(m)) {
      throw new Error(
        `json: cannot unmarshal ${typeof m} into Go struct field ${at} of type userns.idMapping`,
      );
    }
    const o = m as Record<string, unknown>;
    return {
      hostId: decodeUint32(field(o, "hostId"), `${at}.hostId`),
      containerId: decodeUint32(field(o, "containerId"), `${at}.containerId`),
      length: decodeUint32(field(o, "length"), `${at}.length`),
    };
  });
}

const same = (a: IdMapping, b: IdMapping) =>
  a.hostId === b.hostId && a.containerId === b.containerId &&
  a.length === b.length;

/**
 * The range a mappings file records.
 * @throws {Error} with upstream's text when the file is not one it would have written.
 */
export function parseMappingsFile(text: string): PodIdRange {
  let uids: IdMapping[];
  let gids: IdMapping[];
  try {
    const doc: unknown = JSON.parse(text);
    if (doc === null) {
      uids = [];
      gids = [];
    } else if (typeof doc !== "object" || Array.isArray(doc)) {
      throw new Error(
        `json: cannot unmarshal ${
          Array.isArray(doc) ? "array" : typeof doc
        } into Go value of type userns.userNamespace`,
      );
    } else {
      const o = doc as Record<string, unknown>;
      uids = decodeMappings(
        field(o, "uidMappings"),
        "userNamespace.uidMappings",
      );
      gids = decodeMappings(
        field(o, "gidMappings"),
        "userNamespace.gidMappings",
      );
    }
  } catch (cause) {
    throw new Error(
      `invalid user namespace mappings file: ${(cause as Error).message}`,
      { cause },
    );
  }
  if (uids.length !== 1) {
    throw new Error(
      "invalid user namespace configuration: no more than one mapping allowed.",
    );
  }
  if (gids.length !== uids.length) {
    throw new Error(
      "invalid user namespace configuration: GID and UID mappings should be identical.",
    );
  }
  const [uid] = uids as [IdMapping];
  const [gid] = gids as [IdMapping];
  if (!same(uid, gid)) {
    throw new Error(
      "invalid user namespace configuration: GID and UID mapping should be identical",
    );
  }
  // only ranges with root mapped are written, and runtimes expect root to be mapped
  if (uid.containerId !== 0) {
    throw new Error(
      "invalid user namespace configuration: UID 0 must be mapped",
    );
  }
  return { hostId: uid.hostId, length: uid.length };
}
