/**
 * The generic pod lifecycle event generator (PLEG): relists every sandbox and container of the
 * runtime once per period (1 s), diffs each one's state against the previous relist and turns
 * the changes into {@linkcode PodLifecycleEvent}s that wake the pod's worker. It is healthy while
 * the last successful relist is younger than the threshold (3 min).
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { formatGoDuration } from "../../util/go_duration.ts";
import { plegRelistDuration, plegRelistInterval } from "../../metrics/mod.ts";
import {
  ContainerState,
  PodSandboxState,
  type RuntimeService,
} from "../../runtime/mod.ts";
import { errorMessage } from "../../util/error_message.ts";

/** What changed for one container (or sandbox) of a pod. */
export type PodLifecycleEventType =
  | "ContainerStarted"
  | "ContainerDied"
  | "ContainerRemoved"
  | "ContainerChanged"
  | "PodSync";

/** One lifecycle event: `id` is the container or sandbox ID. */
export interface PodLifecycleEvent {
  type: PodLifecycleEventType;
  podUid: string;
  id: string;
}

/** State of a container or sandbox as the PLEG tracks it. */
export type PlegState = "running" | "exited" | "unknown";

/** One container or sandbox seen by a relist. */
export interface PlegRecord {
  podUid: string;
  state: PlegState;
}

const POD_UID_LABEL = "io.kubernetes.pod.uid";

/**
 * Pure diff of two relists (keyed by container/sandbox ID): → running `ContainerStarted`,
 * → exited `ContainerDied`, → unknown `ContainerChanged`, gone `ContainerRemoved` (preceded by
 * `ContainerDied` when it had not been seen exited).
 */
export function computePlegEvents(
  previous: ReadonlyMap<string, PlegRecord>,
  current: ReadonlyMap<string, PlegRecord>,
): PodLifecycleEvent[] {
  const events: PodLifecycleEvent[] = [];
  for (const [id, now] of current) {
    const before = previous.get(id);
    if (before?.state === now.state) continue;
    const type: PodLifecycleEventType = now.state === "running"
      ? "ContainerStarted"
      : now.state === "exited"
      ? "ContainerDied"
      : "ContainerChanged";
    events.push({ type, podUid: now.podUid, id });
  }
  for (const [id, before] of previous) {
    if (current.has(id)) continue;
    if (before.state !== "exited") {
      events.push({ type: "ContainerDied", podUid: before.podUid, id });
    }
    events.push({ type: "ContainerRemoved", podUid: before.podUid, id });
  }
  return events;
}

/** Dependencies of {@linkcode Pleg}. */
export interface PlegDeps {
  runtime: Pick<RuntimeService, "listPodSandbox" | "listContainers">;
  clock: Clock;
  logger: Logger;
}

/** Options of {@linkcode Pleg}. */
export interface PlegOptions {
  /** Relist period in ms (default 1 s). */
  relistPeriodMs?: number;
  /** Health threshold in ms (default 3 min). */
  thresholdMs?: number;
  /** Per-relist CRI call timeout in ms (default 2 min, the runtime request timeout). */
  callTimeoutMs?: number;
  /** Receives the events of every relist that produced some. */
  onEvents?: (events: PodLifecycleEvent[]) => void;
}

/** Health of the PLEG. */
export type PlegHealth = { ok: true } | { ok: false; message: string };

const relistDuration = plegRelistDuration.labels();
const relistInterval = plegRelistInterval.labels();

/** The relisting PLEG. */
export class Pleg {
  #deps: PlegDeps;
  #period: number;
  #threshold: number;
  #callTimeout: number;
  #onEvents: ((events: PodLifecycleEvent[]) => void) | undefined;
  #records = new Map<string, PlegRecord>();
  #lastRelist: number | undefined;
  #failing = false;

  constructor(deps: PlegDeps, options: PlegOptions = {}) {
    this.#deps = deps;
    this.#period = options.relistPeriodMs ?? 1000;
    this.#threshold = options.thresholdMs ?? 180_000;
    this.#callTimeout = options.callTimeoutMs ?? 120_000;
    this.#onEvents = options.onEvents;
  }

  /**
   * Lists the runtime once and returns (and reports) the events since the last successful
   * relist. On a runtime error the previous state is kept and no event is produced.
   */
  async relist(signal?: AbortSignal): Promise<PodLifecycleEvent[]> {
    const { clock } = this.#deps;
    const started = clock.now();
    if (this.#lastRelist !== undefined) {
      relistInterval.observe((started - this.#lastRelist) / 1000);
    }
    try {
      return await this.#relist(started, signal);
    } finally {
      relistDuration.observe((clock.now() - started) / 1000);
    }
  }

  async #relist(
    started: number,
    signal: AbortSignal | undefined,
  ): Promise<PodLifecycleEvent[]> {
    const { runtime, logger } = this.#deps;
    let current: Map<string, PlegRecord>;
    try {
      const opts = {
        timeoutMs: this.#callTimeout,
        ...(signal ? { signal } : {}),
      };
      const [sandboxes, containers] = await Promise.all([
        runtime.listPodSandbox({}, opts),
        runtime.listContainers({}, opts),
      ]);
      current = new Map();
      for (const s of sandboxes.items) {
        const podUid = s.metadata?.uid || s.labels[POD_UID_LABEL] || "";
        if (!podUid) continue;
        current.set(s.id, {
          podUid,
          state: s.state === PodSandboxState.SANDBOX_READY
            ? "running"
            : "exited",
        });
      }
      for (const c of containers.containers) {
        const podUid = c.labels[POD_UID_LABEL] ?? "";
        if (!podUid) continue;
        current.set(c.id, { podUid, state: containerState(c.state) });
      }
    } catch (cause) {
      if (signal?.aborted) return [];
      if (!this.#failing) {
        logger.error("PLEG relist failed", {
          err: errorMessage(cause),
        });
      }
      this.#failing = true;
      return [];
    }
    if (this.#failing) logger.info("PLEG relist succeeded again");
    this.#failing = false;
    const events = computePlegEvents(this.#records, current);
    this.#records = current;
    this.#lastRelist = started;
    if (events.length) this.#onEvents?.(events);
    return events;
  }

  /** Relists every period until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.relist(signal);
      await this.#deps.clock.sleep(this.#period, signal).catch(() => {});
    }
  }

  /** Healthy while the last successful relist is within the threshold. */
  healthy(): PlegHealth {
    if (this.#lastRelist === undefined) {
      return { ok: false, message: "pleg has yet to be successful" };
    }
    const age = this.#deps.clock.now() - this.#lastRelist;
    if (age > this.#threshold) {
      return {
        ok: false,
        message: `pleg was last seen active ${
          formatGoDuration(age)
        } ago; threshold is ${formatGoDuration(this.#threshold)}`,
      };
    }
    return { ok: true };
  }
}

function containerState(state: ContainerState): PlegState {
  switch (state) {
    case ContainerState.CONTAINER_RUNNING:
      return "running";
    case ContainerState.CONTAINER_EXITED:
      return "exited";
    default:
      return "unknown";
  }
}
