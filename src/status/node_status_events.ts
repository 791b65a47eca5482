/**
 * The node events the status setters record (upstream `nodestatus/setters.go`): a pressure
 * condition that appears or changes status records `NodeHas…`, the Ready condition records
 * `NodeReady`/`NodeNotReady` only when an existing condition changes status. The message is
 * always `Node <name> status is now: <reason>` and the type Normal. Before them, a changed
 * boot ID records the Warning `Rebooted` (the machine info setter runs first).
 * @module
 */
import type { NodeStatus } from "../api/mod.ts";

/** Reason by condition type and new status; `announceNew` → also for a new condition. */
const CONDITION_EVENTS: {
  type: string;
  onTrue: string;
  onFalse: string;
  announceNew: boolean;
}[] = [
  {
    type: "MemoryPressure",
    onTrue: "NodeHasInsufficientMemory",
    onFalse: "NodeHasSufficientMemory",
    announceNew: true,
  },
  {
    type: "DiskPressure",
    onTrue: "NodeHasDiskPressure",
    onFalse: "NodeHasNoDiskPressure",
    announceNew: true,
  },
  {
    type: "PIDPressure",
    onTrue: "NodeHasInsufficientPID",
    onFalse: "NodeHasSufficientPID",
    announceNew: true,
  },
  {
    type: "Ready",
    onTrue: "NodeReady",
    onFalse: "NodeNotReady",
    announceNew: false,
  },
];

/** The reasons to record for going from `previous` to `next`, in setter order. */
export function nodeStatusEventReasons(
  previous: NodeStatus | undefined,
  next: NodeStatus,
): string[] {
  const reasons: string[] = [];
  for (const e of CONDITION_EVENTS) {
    const now = next.conditions?.find((c) => c.type === e.type);
    if (!now || now.status === "Unknown") continue;
    const before = previous?.conditions?.find((c) => c.type === e.type);
    if (before ? before.status === now.status : !e.announceNew) continue;
    reasons.push(now.status === "True" ? e.onTrue : e.onFalse);
  }
  return reasons;
}

/** `Node <name> status is now: <reason>`. */
export function nodeStatusEventMessage(
  nodeName: string,
  reason: string,
): string {
  return `Node ${nodeName} status is now: ${reason}`;
}

/** The `Rebooted` event's message when the boot ID changed since the last report. */
export function nodeRebootMessage(
  nodeName: string,
  previous: NodeStatus | undefined,
  next: NodeStatus,
): string | undefined {
  const before = previous?.nodeInfo?.bootID;
  const now = next.nodeInfo?.bootID;
  return before && now && before !== now
    ? `Node ${nodeName} has been rebooted, boot id: ${now}`
    : undefined;
}
