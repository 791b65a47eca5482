/**
 * Fakes for the eviction manager's tests: a node whose figures the test sets, pods with their
 * usage, and a record of what the manager did.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { Pod } from "../pod/mod.ts";
import type { EvictionManagerDeps } from "./manager.ts";
import type { NodeStats } from "./observe.ts";
import type { PodUsage } from "./rank.ts";

/** A pod with the fields eviction reads. */
export function evictionPod(
  name: string,
  options: {
    memoryRequest?: string;
    memoryLimit?: string;
    priority?: number;
    gracePeriodSeconds?: number;
    annotations?: Record<string, string>;
  } = {},
): Pod {
  const requests = options.memoryRequest
    ? { memory: options.memoryRequest }
    : undefined;
  const limits = options.memoryLimit
    ? { memory: options.memoryLimit }
    : undefined;
  return {
    metadata: {
      name,
      namespace: "default",
      uid: `uid-${name}`,
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      containers: [{
        name: "main",
        image: "busybox",
        ...(requests || limits
          ? {
            resources: {
              ...(requests ? { requests } : {}),
              ...(limits ? { limits } : {}),
            },
          }
          : {}),
      }],
      ...(options.priority !== undefined ? { priority: options.priority } : {}),
      ...(options.gracePeriodSeconds !== undefined
        ? { terminationGracePeriodSeconds: options.gracePeriodSeconds }
        : {}),
    },
  } as Pod;
}

/** Usage of one container `main` with `memoryBytes`. */
export function memoryUsage(memoryBytes: number): PodUsage {
  return {
    memoryBytes,
    containers: [{ name: "main", memoryBytes }],
    volumes: new Map(),
  };
}

/** A node, its pods and a log of evictions and reclaims, as manager deps. */
export class FakeEvictionNode {
  readonly clock: Clock;
  readonly logger: Logger;
  stats: NodeStats = { timeMs: 0 };
  /** Figures after a reclaim ran (default: unchanged). */
  statsAfterReclaim: NodeStats | undefined;
  dedicatedImageFs = false;
  pods: Pod[] = [];
  usage = new Map<string, PodUsage>();
  readonly evicted: {
    pod: string;
    gracePeriodSeconds: number;
    message: string;
  }[] = [];
  readonly reclaims: string[] = [];
  readonly events: string[] = [];
  #reclaimed = false;

  /** Tests pass a `FakeClock` and a `CaptureLogger`. */
  constructor(deps: { clock: Clock; logger: Logger }) {
    this.clock = deps.clock;
    this.logger = deps.logger;
  }

  deps(): EvictionManagerDeps {
    return {
      clock: this.clock,
      logger: this.logger,
      readNode: () =>
        Promise.resolve({
          stats: {
            ...(this.#reclaimed && this.statsAfterReclaim
              ? this.statsAfterReclaim
              : this.stats),
            timeMs: this.clock.now(),
          },
          dedicatedImageFs: this.dedicatedImageFs,
        }),
      readPods: () => Promise.resolve(this.usage),
      activePods: () =>
        this.pods.filter((p) =>
          !this.evicted.some((e) => e.pod === p.metadata.name)
        ),
      evictPod: (pod, eviction) => {
        this.evicted.push({ pod: pod.metadata.name ?? "", ...eviction });
      },
      podCleanedUp: () => true,
      deleteUnusedContainers: () => {
        this.reclaims.push("containers");
        this.#reclaimed = true;
        return Promise.resolve();
      },
      deleteUnusedImages: () => {
        this.reclaims.push("images");
        this.#reclaimed = true;
        return Promise.resolve();
      },
      nodeEvent: (reason, message) => {
        this.events.push(`${reason}: ${message}`);
      },
    };
  }
}
