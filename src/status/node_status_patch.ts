/**
 * The node status patch (upstream `component-helpers/node/util.PatchNodeStatus`, which sends a
 * two-way strategic merge patch from the old Node to the new one, spec excluded): changed keys
 * with their new values, removed keys as null, and changed lists replaced whole. A list the
 * API merges by key (`conditions` and `addresses`, by `type`) carries a `$patch: replace`
 * element to say so (upstream replaces `addresses` whole the same way, in
 * `fixupPatchForNodeStatusAddresses`); any other list (`images`, `volumesInUse`, …) is atomic
 * to the API server and is sent as it is: a directive element there would be kept as an item.
 * @module
 */
import type { NodeStatus } from "../api/mod.ts";

type Json = unknown;

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON values (object key order ignored). */
export function jsonDeepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => jsonDeepEqual(x, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonDeepEqual(a[k], b[k]));
}

/** NodeStatus lists with a patch merge key: the API server merges them item by item. */
const MERGE_KEYED_LISTS = new Set(["conditions", "addresses"]);

/**
 * The merge patch that turns `from` into `to`, or undefined when they are equal. `key` is the
 * field name of `to` in its parent: merge-keyed lists are replaced whole with a trailing
 * `{"$patch": "replace"}`, other lists are sent as they are.
 */
export function twoWayPatch(
  from: Json,
  to: Json,
  key = "",
): Json | undefined {
  if (jsonDeepEqual(from, to)) return undefined;
  if (Array.isArray(to)) {
    return MERGE_KEYED_LISTS.has(key) ? [...to, { $patch: "replace" }] : to;
  }
  if (!isObject(to) || !isObject(from)) return to;
  const patch: Record<string, Json> = {};
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined) continue;
    const sub = twoWayPatch(from[k], v, k);
    if (sub !== undefined) patch[k] = sub;
  }
  for (const k of Object.keys(from)) {
    if (from[k] !== undefined && to[k] === undefined) patch[k] = null;
  }
  return patch;
}

function withoutHeartbeats(status: NodeStatus | undefined): NodeStatus {
  return {
    ...status,
    conditions: (status?.conditions ?? []).map((c) => {
      const { lastHeartbeatTime: _dropped, ...rest } = c;
      return rest;
    }),
  };
}

/**
 * Upstream `nodeStatusHasChanged`: whether `next` differs from `previous` in anything but
 * the conditions' heartbeat times.
 */
export function nodeStatusChanged(
  previous: NodeStatus | undefined,
  next: NodeStatus,
): boolean {
  return !jsonDeepEqual(withoutHeartbeats(previous), withoutHeartbeats(next));
}
