/**
 * The node lease heartbeat (upstream `component-helpers/apimachinery/lease` controller with the
 * kubelet's `setNodeOwnerFunc`): `kube-node-lease/<node>` held by the node, renewed every
 * `leaseDurationSeconds × 0.25`.
 *
 * Contract: `run(signal)` syncs, waits the renew interval, and repeats until `signal` aborts;
 * it never throws. One sync updates the last lease it saw (up to 5 tries, re-reading after a
 * conflict); when that fails or no lease is known it gets or creates the lease, backing off
 * from 100 ms doubling to 7 s until that works. It does not depend on node status updates:
 * the heartbeat goes on while they fail.
 * @module
 */
import {
  ApiConflictError,
  ApiNotFoundError,
  type Lease,
  type LeaseApi,
} from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { errorMessage } from "../util/error_message.ts";

/** Namespace of node leases. */
export const NODE_LEASE_NAMESPACE = "kube-node-lease";
/** `nodeLeaseRenewIntervalFraction` of the kubelet. */
export const RENEW_INTERVAL_FRACTION = 0.25;
const MAX_UPDATE_RETRIES = 5;
const MAX_BACKOFF_MS = 7000;

/** Dependencies of {@linkcode NodeLeaseController}. */
export interface LeaseControllerDeps {
  api: LeaseApi;
  clock: Clock;
  logger: Logger;
  /** The Node's UID once known; the lease then gets the Node as owner. */
  nodeUid(): string | undefined;
}

/** Options of {@linkcode NodeLeaseController}. */
export interface LeaseControllerOptions {
  nodeName: string;
  /** `nodeLeaseDurationSeconds` (default 40). */
  leaseDurationSeconds?: number;
  /** Default `leaseDurationSeconds × 0.25`. */
  renewIntervalMs?: number;
}

/** MicroTime: RFC 3339 with six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function message(e: unknown): string {
  return errorMessage(e);
}

/** Creates and renews the node's lease. */
export class NodeLeaseController {
  #deps: LeaseControllerDeps;
  #name: string;
  #duration: number;
  #intervalMs: number;
  #latest: Lease | undefined;

  constructor(deps: LeaseControllerDeps, options: LeaseControllerOptions) {
    this.#deps = deps;
    this.#name = options.nodeName;
    this.#duration = options.leaseDurationSeconds ?? 40;
    this.#intervalMs = options.renewIntervalMs ??
      this.#duration * 1000 * RENEW_INTERVAL_FRACTION;
  }

  /** The renew interval in ms. */
  get renewIntervalMs(): number {
    return this.#intervalMs;
  }

  /** The lease as last written or read. */
  get latest(): Lease | undefined {
    return this.#latest;
  }

  /** Upstream `newLease`: the base (or a new lease) with holder, duration, renew time, owner. */
  #newLease(base: Lease | undefined): Lease {
    const lease: Lease = base ? structuredClone(base) : {
      metadata: { name: this.#name, namespace: NODE_LEASE_NAMESPACE },
      spec: {},
    };
    lease.spec.holderIdentity = this.#name;
    lease.spec.leaseDurationSeconds = this.#duration;
    lease.spec.renewTime = microTime(this.#deps.clock.now());
    const uid = this.#deps.nodeUid();
    if (!lease.metadata.ownerReferences?.length && uid) {
      lease.metadata.ownerReferences = [{
        apiVersion: "v1",
        kind: "Node",
        name: this.#name,
        uid,
      }];
    }
    return lease;
  }

  /** Gets the lease, creating it when missing; `created` tells which. */
  async #ensure(
    signal: AbortSignal,
  ): Promise<{ lease: Lease; created: boolean }> {
    const { api } = this.#deps;
    const found = await api.getLease(NODE_LEASE_NAMESPACE, this.#name, {
      signal,
    });
    if (found) return { lease: found, created: false };
    return {
      lease: await api.createLease(this.#newLease(undefined), { signal }),
      created: true,
    };
  }

  async #backoffEnsure(
    signal: AbortSignal,
  ): Promise<{ lease: Lease; created: boolean } | undefined> {
    for (let sleep = 100; !signal.aborted;) {
      try {
        return await this.#ensure(signal);
      } catch (e) {
        if (signal.aborted) return undefined;
        this.#deps.logger.error("Failed to ensure lease exists, will retry", {
          lease: `${NODE_LEASE_NAMESPACE}/${this.#name}`,
          interval: `${sleep}ms`,
          err: message(e),
        });
      }
      try {
        await this.#deps.clock.sleep(sleep, signal);
      } catch {
        return undefined;
      }
      sleep = Math.min(sleep * 2, MAX_BACKOFF_MS);
    }
    return undefined;
  }

  async #retryUpdate(base: Lease, signal: AbortSignal): Promise<void> {
    let current = base;
    let lastError: unknown;
    for (let i = 0; i < MAX_UPDATE_RETRIES; i++) {
      try {
        this.#latest = await this.#deps.api.updateLease(
          this.#newLease(current),
          { signal },
        );
        return;
      } catch (e) {
        lastError = e;
        if (signal.aborted) throw e;
        this.#deps.logger.error("Failed to update lease", {
          lease: `${NODE_LEASE_NAMESPACE}/${this.#name}`,
          err: message(e),
        });
        if (e instanceof ApiConflictError || e instanceof ApiNotFoundError) {
          const ensured = await this.#backoffEnsure(signal);
          if (!ensured) throw e;
          if (ensured.created) {
            this.#latest = ensured.lease;
            return;
          }
          current = ensured.lease;
        }
      }
    }
    throw new Error(
      `Failed ${MAX_UPDATE_RETRIES} attempts to update lease: ${
        message(lastError)
      }`,
      { cause: lastError },
    );
  }

  /** One heartbeat (upstream `controller.sync`). Never throws. */
  async sync(signal: AbortSignal): Promise<void> {
    if (this.#latest) {
      try {
        await this.#retryUpdate(this.#latest, signal);
        return;
      } catch (e) {
        if (signal.aborted) return;
        this.#deps.logger.info(
          "Failed to update lease using latest lease, falling back to ensure lease",
          { err: message(e) },
        );
      }
    }
    const ensured = await this.#backoffEnsure(signal);
    if (!ensured) return;
    this.#latest = ensured.lease;
    if (ensured.created) return;
    try {
      await this.#retryUpdate(ensured.lease, signal);
    } catch (e) {
      if (signal.aborted) return;
      this.#deps.logger.error("Will retry updating lease", {
        interval: `${this.#intervalMs}ms`,
        err: message(e),
      });
    }
  }

  /** Syncs every renew interval until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.sync(signal);
      try {
        await this.#deps.clock.sleep(this.#intervalMs, signal);
      } catch {
        return;
      }
    }
  }
}
