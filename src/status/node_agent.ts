/**
 * The node's presence in the cluster: the status reporter (registration and status) and the
 * lease heartbeat, run side by side so that one failing does not stop the other (upstream
 * starts `syncNodeStatus` and the node lease controller as separate loops).
 * @module
 */
import { runReflector } from "../api/mod.ts";
import type { LeaseApi, NodeApi, NodeWatchApi } from "../api/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { NodeLeaseController } from "./lease_controller.ts";
import type { NodeRegistrationOptions } from "./node_registration.ts";
import { type NodeStatusDeps, NodeStatusReporter } from "./node_status.ts";
import type { NodeFacts } from "./node_status_setters.ts";

/** Dependencies of {@linkcode createNodeAgent}. */
export interface NodeAgentDeps {
  api: NodeApi & LeaseApi;
  clock: Clock;
  logger: Logger;
  facts(signal: AbortSignal): Promise<NodeFacts>;
  /** Node events of status changes; omitted → none. */
  recordEvent?: NodeStatusDeps["recordEvent"];
  /**
   * Keeps the reporter's Node current between status updates (upstream's node informer);
   * omitted → the Node as last read or written by the status loop.
   */
  nodeWatch?: NodeWatchApi;
}

/** Options of {@linkcode createNodeAgent} (durations in ms). */
export interface NodeAgentOptions {
  registration: NodeRegistrationOptions;
  registerNode?: boolean;
  updateFrequencyMs?: number;
  reportFrequencyMs?: number;
  leaseDurationSeconds?: number;
}

/** Registration, status and lease loops. */
export interface NodeAgent extends AsyncDisposable {
  readonly reporter: NodeStatusReporter;
  readonly lease: NodeLeaseController;
  /** Starts both loops; a second call does nothing. */
  start(): void;
  /** Stops both loops and waits for them. Safe to call twice. */
  stop(): Promise<void>;
}

/** Builds the node agent. */
export function createNodeAgent(
  deps: NodeAgentDeps,
  options: NodeAgentOptions,
): NodeAgent {
  const { api, clock, logger } = deps;
  const reporter = new NodeStatusReporter({
    api,
    clock,
    logger: logger.with({ component: "node-status" }),
    facts: deps.facts,
    ...(deps.recordEvent ? { recordEvent: deps.recordEvent } : {}),
  }, {
    registration: options.registration,
    ...(options.registerNode !== undefined
      ? { registerNode: options.registerNode }
      : {}),
    ...(options.updateFrequencyMs !== undefined
      ? { updateFrequencyMs: options.updateFrequencyMs }
      : {}),
    ...(options.reportFrequencyMs !== undefined
      ? { reportFrequencyMs: options.reportFrequencyMs }
      : {}),
  });
  const lease = new NodeLeaseController({
    api,
    clock,
    logger: logger.with({ component: "node-lease" }),
    nodeUid: () => reporter.nodeUid,
  }, {
    nodeName: options.registration.nodeName,
    ...(options.leaseDurationSeconds !== undefined
      ? { leaseDurationSeconds: options.leaseDurationSeconds }
      : {}),
  });
  const stopper = new AbortController();
  let tasks: Promise<void>[] | undefined;
  let stopped: Promise<void> | undefined;
  return {
    reporter,
    lease,
    start() {
      if (tasks || stopper.signal.aborted) return;
      tasks = [reporter.run(stopper.signal), lease.run(stopper.signal)];
      const watch = deps.nodeWatch;
      const name = options.registration.nodeName;
      if (watch) {
        tasks.push(runReflector({
          api: {
            list: (signal) => watch.listOwnNode(name, signal ? { signal } : {}),
            watch: (version, opts) => watch.watchOwnNode(name, version, opts),
          },
          clock,
          logger: logger.with({ component: "node-watch" }),
        }, {
          what: "nodes",
          onList: (items) => {
            for (const node of items) reporter.observe(node);
          },
          onEvent: (event) => {
            if (event.type === "ADDED" || event.type === "MODIFIED") {
              reporter.observe(event.object);
            }
          },
          signal: stopper.signal,
        }));
      }
    },
    stop() {
      stopped ??= (async () => {
        stopper.abort();
        await Promise.all(tasks ?? []);
      })();
      return stopped;
    },
    async [Symbol.asyncDispose]() {
      await this.stop();
    },
  };
}
