/**
 * Registers the Node and keeps its status current (upstream `kubelet_node_status.go`:
 * `registerWithAPIServer`, `syncNodeStatus`, `tryUpdateNodeStatus`).
 *
 * Contract of {@linkcode NodeStatusReporter}: `run(signal)` registers until it succeeds
 * (back-off 100 ms doubling to 7 s), then every `updateFrequencyMs` computes the status and
 * patches `nodes/<name>/status` only when it changed (heartbeat times aside) or
 * `reportFrequencyMs` passed since the last report. A failed update is retried up to 5 times
 * in one round (re-reading the Node after the first), then waits for the next round. It
 * never throws; it resolves once `signal` aborts.
 * @module
 */
import type { Node, NodeApi } from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import {
  initialNode,
  type NodeRegistrationOptions,
  reconcileExistingNode,
  restoreOsArchLabels,
} from "./node_registration.ts";
import { nodeStatusChanged, twoWayPatch } from "./node_status_patch.ts";
import { computeNodeStatus, type NodeFacts } from "./node_status_setters.ts";
import {
  nodeRebootMessage,
  nodeStatusEventMessage,
  nodeStatusEventReasons,
} from "./node_status_events.ts";
import type { NodeStatus } from "../api/mod.ts";
import { ApiAlreadyExistsError } from "../api/mod.ts";
import { errorMessage } from "../util/error_message.ts";

/** Dependencies of {@linkcode NodeStatusReporter}. */
export interface NodeStatusDeps {
  api: NodeApi;
  clock: Clock;
  logger: Logger;
  /** Gathers host and runtime facts for one status computation. */
  facts(signal: AbortSignal): Promise<NodeFacts>;
  /** Records a node event (`NodeReady`, `NodeHasSufficientMemory`, ...); omitted → none. */
  recordEvent?: (
    type: "Normal" | "Warning",
    reason: string,
    message: string,
  ) => void;
}

/** Options of {@linkcode NodeStatusReporter}. */
export interface NodeStatusOptions {
  registration: NodeRegistrationOptions;
  /** `registerNode` (default true); false → only update an existing Node. */
  registerNode?: boolean;
  /** `nodeStatusUpdateFrequency` (default 10 s). */
  updateFrequencyMs?: number;
  /** `nodeStatusReportFrequency` (default 5 min). */
  reportFrequencyMs?: number;
}

const UPDATE_RETRIES = 5;
const MAX_REGISTER_BACKOFF_MS = 7000;

function message(e: unknown): string {
  return errorMessage(e);
}

/**
 * Whether `node` is an older version than `held`. Resource versions are opaque to clients,
 * but the API server's are etcd revisions, decimal and increasing; anything else counts as
 * newer.
 */
export function isOlder(node: Node, held: Node | undefined): boolean {
  const version = (n: Node | undefined) => {
    const rv = n?.metadata.resourceVersion ?? "";
    return /^\d{1,15}$/.test(rv) ? Number(rv) : undefined;
  };
  const mine = version(node);
  const theirs = version(held);
  return mine !== undefined && theirs !== undefined && mine < theirs;
}

/** Registration and the node status loop. */
export class NodeStatusReporter {
  #deps: NodeStatusDeps;
  #options: NodeStatusOptions;
  #node: Node | undefined;
  /** The Node built from local facts, until the API server's copy is known. */
  #local: Node | undefined;
  #registered = false;
  #lastReport = -Infinity;

  constructor(deps: NodeStatusDeps, options: NodeStatusOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  get #name(): string {
    return this.#options.registration.nodeName;
  }

  /**
   * The Node as last read or written (admission reads its labels and allocatable); before
   * that, the one built from local facts, as upstream's getNodeAnyWay falls back to its
   * initial node: static pods are admitted while the API server cannot be reached.
   */
  get node(): Node | undefined {
    return this.#node ?? this.#local;
  }

  /**
   * A copy of the Node seen by the watch: kept unless the one held is newer (a status write's
   * answer may overtake the watch's event of an older version).
   */
  observe(node: Node): void {
    if (node.metadata.name !== this.#name) return;
    if (isOlder(node, this.#node)) return;
    this.#node = node;
  }

  /** The Node's UID once it is known (the lease's owner reference needs it). */
  get nodeUid(): string | undefined {
    return this.#node?.metadata.uid;
  }

  /** Whether registration has succeeded. */
  get registered(): boolean {
    return this.#registered;
  }

  /** Records the events of a status computation, as the upstream setters do while computing. */
  #recordTransitions(previous: NodeStatus | undefined, next: NodeStatus) {
    const record = this.#deps.recordEvent;
    if (!record) return;
    const rebooted = nodeRebootMessage(this.#name, previous, next);
    if (rebooted) record("Warning", "Rebooted", rebooted);
    for (const reason of nodeStatusEventReasons(previous, next)) {
      record("Normal", reason, nodeStatusEventMessage(this.#name, reason));
    }
  }

  /**
   * The Node as registration sends it, built from local facts, kept as {@linkcode node} until
   * the API server's copy is known.
   */
  async localNode(signal: AbortSignal): Promise<Node> {
    const initial = initialNode(this.#options.registration);
    // Upstream creates the Node before its first runtime status check and PLEG relist have
    // completed, so it registers NotReady and the status update right after turns it Ready
    // (with a NodeReady event); registration here does the same.
    const { runtimeConditions: _notYet, ...facts } = await this.#deps.facts(
      signal,
    );
    initial.status = computeNodeStatus(
      undefined,
      facts,
      this.#deps.clock.now(),
    );
    this.#local = initial;
    return initial;
  }

  /** One registration attempt; true when the Node exists with our metadata. */
  async register(signal: AbortSignal): Promise<boolean> {
    const { api, logger } = this.#deps;
    const initial = await this.localNode(signal);
    this.#recordTransitions(undefined, initial.status!);
    try {
      this.#node = await api.createNode(initial, { signal });
      logger.info("Successfully registered node", { node: this.#name });
      return true;
    } catch (e) {
      if (!(e instanceof ApiAlreadyExistsError)) {
        logger.error("Unable to register node with API server", {
          node: this.#name,
          err: message(e),
        });
        return false;
      }
    }
    const existing = await api.getNode(this.#name, { signal });
    if (!existing) return false;
    const { node, changed } = reconcileExistingNode(existing, initial);
    this.#node = changed
      ? await api.patchNodeStatus(
        this.#name,
        twoWayPatch(
          { metadata: existing.metadata },
          { metadata: node.metadata },
        ),
        { signal },
      )
      : existing;
    logger.info("Node was previously registered", { node: this.#name });
    return true;
  }

  /**
   * One status round (upstream `updateNodeStatus`): true when the status was patched,
   * false when nothing needed reporting. Rejects after the last failed try.
   */
  async updateStatus(signal: AbortSignal): Promise<boolean> {
    let lastError: unknown;
    for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
      try {
        return await this.#tryUpdate(attempt > 0, signal);
      } catch (e) {
        if (signal.aborted) throw e;
        lastError = e;
        this.#deps.logger.error("Error updating node status, will retry", {
          node: this.#name,
          err: message(e),
        });
      }
    }
    throw new Error(
      `Update node status exceeds retry count: ${message(lastError)}`,
      { cause: lastError },
    );
  }

  async #tryUpdate(_refetch: boolean, signal: AbortSignal): Promise<boolean> {
    const { api, clock } = this.#deps;
    // Every round starts from the API server's Node, as upstream's tryUpdateNodeStatus does:
    // what others changed there (labels, capacity patched in) is seen and kept.
    const node = await api.getNode(this.#name, { signal });
    if (!node) throw new Error(`Node "${this.#name}" not found`);
    this.#node = node;
    const original = node;
    const facts = await this.#deps.facts(signal);
    const now = clock.now();
    const status = computeNodeStatus(original.status, facts, now);
    this.#recordTransitions(original.status, status);
    const { os, arch } = this.#options.registration;
    const labels = restoreOsArchLabels(original.metadata.labels, os, arch);
    const due =
      now - this.#lastReport >= (this.#options.reportFrequencyMs ?? 300_000);
    if (!nodeStatusChanged(original.status, status) && !due && !labels) {
      return false;
    }
    const patch = twoWayPatch({ status: original.status ?? {} }, { status }) ??
      { status: {} };
    if (labels) {
      (patch as Record<string, unknown>).metadata = {
        labels: twoWayPatch(original.metadata.labels ?? {}, labels),
      };
    }
    this.#node = await api.patchNodeStatus(this.#name, patch, { signal });
    this.#lastReport = now;
    return true;
  }

  /** Registers, then reports every `updateFrequencyMs` until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#deps;
    const sleep = (ms: number) =>
      clock.sleep(ms, signal).then(() => true, () => false);
    if (this.#options.registerNode ?? true) {
      for (let backoff = 100; !this.#registered && !signal.aborted;) {
        try {
          this.#registered = await this.register(signal);
        } catch (e) {
          if (signal.aborted) return;
          logger.error("Unable to register node with API server", {
            node: this.#name,
            err: message(e),
          });
        }
        if (this.#registered) break;
        if (!(await sleep(backoff))) return;
        backoff = Math.min(backoff * 2, MAX_REGISTER_BACKOFF_MS);
      }
    }
    while (!signal.aborted) {
      try {
        await this.updateStatus(signal);
      } catch (e) {
        if (signal.aborted) return;
        logger.error("Unable to update node status", {
          node: this.#name,
          err: message(e),
        });
      }
      if (!(await sleep(this.#options.updateFrequencyMs ?? 10_000))) return;
    }
  }
}
