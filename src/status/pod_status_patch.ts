/**
 * The pod status patch the kubelet sends (upstream `statusutil.PatchPodStatus`): a two-way
 * merge patch from the API server's status to ours, with the pod UID in `metadata` so the
 * server rejects it (409) when the pod was recreated under the same name. Conditions are a
 * list merged by `type`, so sending ours leaves the conditions other components own (the
 * scheduler's PodScheduled, DisruptionTarget) in place. Fields the kubelet does not compute
 * (the API server's `qosClass` default, `nominatedNodeName`) are never cleared.
 * @module
 */
import type { PodStatus } from "../api/mod.ts";
import { jsonEqual } from "./pod_status_manager.ts";

/**
 * Conditions the kubelet owns and drops when they no longer hold (upstream
 * `IsPodConditionOwnedByKubelet` among those it ever removes): gone from our status, they are
 * deleted from the API's list (`$patch: delete`, as the two-way merge upstream sends).
 */
const REMOVED_BY_KUBELET = new Set(["PodResizePending", "PodResizeInProgress"]);

/**
 * Lists the API merges by their `ip` (`podIPs`, `hostIPs`): a changed list carries a delete
 * directive for each address that is gone and the new order, as a two-way merge patch does;
 * without them the server would keep the old sandbox's address beside the new one.
 */
const MERGED_BY_IP = new Set(["podIPs", "hostIPs"]);

/** Status fields the kubelet clears when its status no longer has them. */
const CLEARED_BY_KUBELET = new Set(["message", "reason"]);

/** `{metadata: {uid}, status: {...changed fields}}`, or undefined when nothing changed. */
export function podStatusPatch(
  uid: string,
  old: PodStatus | undefined,
  next: PodStatus,
): { metadata: { uid: string }; status: Record<string, unknown> } | undefined {
  const before = (old ?? {}) as Record<string, unknown>;
  const after = next as Record<string, unknown>;
  const status: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (key === "conditions") continue;
    const a = pruned(before[key]);
    const b = pruned(after[key]);
    if (b === undefined) {
      if (a !== undefined && CLEARED_BY_KUBELET.has(key)) status[key] = null;
    } else if (!jsonEqual(a, b)) {
      status[key] = after[key];
      if (MERGED_BY_IP.has(key) && Array.isArray(before[key])) {
        const now = after[key] as { ip: string }[];
        const gone = (before[key] as { ip: string }[]).filter((o) =>
          !now.some((n) => n.ip === o.ip)
        );
        status[key] = [
          ...now,
          ...gone.map((o) => ({ ip: o.ip, $patch: "delete" })),
        ];
        status[`$setElementOrder/${key}`] = now.map((n) => ({ ip: n.ip }));
      }
    }
  }
  const changedConditions = (next.conditions ?? []).filter((c) =>
    !old?.conditions?.some((o) => jsonEqual(pruned(o), pruned(c)))
  );
  const removed = (old?.conditions ?? []).filter((o) =>
    REMOVED_BY_KUBELET.has(o.type) &&
    !next.conditions?.some((c) => c.type === o.type)
  );
  if (changedConditions.length || removed.length) {
    // conditions merge by type field by field: a field we no longer set (the reason of a
    // condition that turned True) must be removed explicitly
    status.conditions = changedConditions.map((c) => {
      const found = old?.conditions?.find((o) => o.type === c.type);
      const prev: Record<string, unknown> = { ...found };
      const mine: Record<string, unknown> = { ...c };
      const cleared = Object.keys(prev).filter((k) =>
        pruned(mine[k]) === undefined && pruned(prev[k]) !== undefined
      );
      return { ...c, ...Object.fromEntries(cleared.map((k) => [k, null])) };
    }).concat(
      removed.map((o) =>
        ({
          type: o.type,
          $patch: "delete",
        }) as unknown as typeof changedConditions[
          number
        ]
      ),
    );
  }
  return Object.keys(status).length ? { metadata: { uid }, status } : undefined;
}

/**
 * The value as the API server stores it: empty strings, nulls, empty objects and lists are
 * omitted there (`omitempty`), so they must not count as a difference.
 */
function pruned(value: unknown): unknown {
  if (value === null || value === "") return undefined;
  if (Array.isArray(value)) {
    const items = value.map(pruned).filter((v) => v !== undefined);
    return items.length ? items : undefined;
  }
  if (typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const p = pruned(v);
      if (p !== undefined) out[k] = p;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return value;
}
