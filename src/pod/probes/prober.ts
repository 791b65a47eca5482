/**
 * The probe manager (upstream `pkg/kubelet/prober/prober_manager.go`): keeps one
 * {@linkcode ProbeWorker} per (pod UID, container name, probe type) for the containers and
 * sidecar init containers that declare probes.
 *
 * Pods come from the pod status cache: a stored status of a non-terminal pod adds its workers
 * (existing ones are kept), a terminal phase or a removed status stops them. A pod leaving the
 * configuration is terminating: `stopLivenessAndStartup` stops those two kinds at once (the sync
 * handler calls it) while readiness runs until the status is removed. Workers read the
 * latest cached status on every tick, so the prober needs no other view of the runtime.
 * Published result changes go to `onResult` (the kubelet queues a sync of the pod).
 *
 * Contract: `start(signal)` subscribes and may be called once; `stop()` unsubscribes, aborts
 * every worker, waits for them and is safe to call twice. No timer outlives `stop()`.
 *
 * @module
 */

import type { Logger } from "../../log/mod.ts";
import type { PodStatusManager } from "../../status/mod.ts";
import type { ProbeHandlerDeps } from "./probe_handlers.ts";
import type {
  ProbeResultChange,
  ProbeResults,
  ProbeType,
} from "./probe_results.ts";
import { containerProbe, ProbeWorker } from "./probe_worker.ts";
import type { Container, Pod } from "../types.ts";
import { isSidecar } from "../types.ts";
import type { PodEventRecorder } from "../pod_events.ts";

/** Dependencies of {@linkcode createProber}. */
export interface ProberDeps extends ProbeHandlerDeps {
  /** The pod status cache: the source of pods, container ids, states and start times. */
  statuses: Pick<PodStatusManager, "getPodStatus" | "onChange">;
  /** Maps the prober writes; the pod syncer reads the same object. */
  results: ProbeResults;
  logger: Logger;
  /** `Unhealthy` and `ProbeWarning` events; omitted → none. */
  events?: PodEventRecorder;
}

/** Options of {@linkcode createProber}. */
export interface ProberOptions {
  /** Called after a published result changed. */
  onResult?: (change: ProbeResultChange) => void;
  /** Random source for the first-probe jitter (default `Math.random`; tests pass `() => 0`). */
  random?: () => number;
}

/** Runs container probes for the pods in the status cache. */
export interface Prober extends AsyncDisposable {
  /** Subscribes to the status cache; workers run until `signal` aborts or `stop()`. */
  start(signal: AbortSignal): void;
  /** Adds workers for the probes `pod` declares (no-op for existing ones). */
  addPod(pod: Pod): void;
  /**
   * The pod is terminating: stops its liveness and startup workers and starts no new ones
   * (upstream `StopLivenessAndStartup`); readiness keeps running until the pod is removed.
   */
  stopLivenessAndStartup(uid: string): Promise<void>;
  /** Stops and forgets the pod's workers (their results are removed). */
  removePod(uid: string): Promise<void>;
  /** Number of running workers (for tests and metrics). */
  readonly workerCount: number;
  /** Stops every worker. Safe to call twice. */
  stop(): Promise<void>;
}

const PROBE_TYPES: ProbeType[] = ["liveness", "readiness", "startup"];

interface RunningWorker {
  uid: string;
  probeType: ProbeType;
  controller: AbortController;
  done: Promise<void>;
}

function probedContainers(pod: Pod): Container[] {
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => isSidecar(c));
  return [...sidecars, ...pod.spec.containers];
}

class ProbeManager implements Prober {
  #deps: ProberDeps;
  #options: ProberOptions;
  #workers = new Map<string, RunningWorker>();
  /** UIDs whose liveness/startup probing stopped for termination. */
  #terminating = new Set<string>();
  #unsubscribe: (() => void) | undefined;
  #signal: AbortSignal | undefined;
  #startedAt = 0;
  #stopped = false;

  constructor(deps: ProberDeps, options: ProberOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  get workerCount(): number {
    return this.#workers.size;
  }

  start(signal: AbortSignal): void {
    if (this.#signal || this.#stopped) return;
    this.#signal = signal;
    this.#startedAt = this.#deps.clock.now();
    signal.addEventListener("abort", () => void this.stop(), { once: true });
    this.#unsubscribe = this.#deps.statuses.onChange((change) => {
      if (change.kind === "removed") {
        void this.removePod(change.uid);
        return;
      }
      const phase = change.entry.status.phase;
      if (phase === "Succeeded" || phase === "Failed") {
        void this.removePod(change.entry.uid);
      } else {
        this.addPod(change.pod);
      }
    });
  }

  addPod(pod: Pod): void {
    if (this.#stopped) return;
    const uid = pod.metadata.uid ?? "";
    for (const container of probedContainers(pod)) {
      for (const probeType of PROBE_TYPES) {
        if (!containerProbe(container, probeType)) continue;
        if (probeType !== "readiness" && this.#terminating.has(uid)) continue;
        const key = `${uid}/${container.name}/${probeType}`;
        if (this.#workers.has(key)) continue;
        this.#startWorker(key, pod, container, probeType);
      }
    }
  }

  #startWorker(
    key: string,
    pod: Pod,
    container: Container,
    probeType: ProbeType,
  ): void {
    const { onResult, random } = this.#options;
    const worker = new ProbeWorker({
      ...this.#deps,
      ...(onResult ? { onChange: onResult } : {}),
    }, {
      pod,
      container,
      probeType,
      // spread the first probes when the kubelet just started (upstream worker.run)
      jitter: this.#deps.clock.now() - this.#startedAt <
        worker0Period(container, probeType),
      ...(random ? { random } : {}),
    });
    const controller = new AbortController();
    const entry: RunningWorker = {
      uid: pod.metadata.uid ?? "",
      probeType,
      controller,
      done: Promise.resolve(),
    };
    entry.done = worker.run(controller.signal).finally(() => {
      if (this.#workers.get(key) === entry) this.#workers.delete(key);
    });
    this.#workers.set(key, entry);
  }

  async stopLivenessAndStartup(uid: string): Promise<void> {
    if (this.#stopped) return;
    this.#terminating.add(uid);
    await this.#stopWhere((w) => w.uid === uid && w.probeType !== "readiness");
  }

  async removePod(uid: string): Promise<void> {
    this.#terminating.delete(uid);
    await this.#stopWhere((w) => w.uid === uid);
  }

  async #stopWhere(match: (w: RunningWorker) => boolean): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const [key, w] of this.#workers) {
      if (!match(w)) continue;
      this.#workers.delete(key);
      w.controller.abort();
      stopping.push(w.done);
    }
    await Promise.all(stopping);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    const all = [...this.#workers.values()];
    this.#workers.clear();
    for (const w of all) w.controller.abort();
    await Promise.all(all.map((w) => w.done));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

function worker0Period(container: Container, type: ProbeType): number {
  const period = containerProbe(container, type)?.periodSeconds ?? 10;
  return Math.max(1, period) * 1000;
}

/** Creates the probe manager; call `start(signal)` to begin probing. */
export function createProber(
  deps: ProberDeps,
  options: ProberOptions = {},
): Prober {
  return new ProbeManager(deps, options);
}
