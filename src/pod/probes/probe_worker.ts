/**
 * One probe worker per (pod UID, container name, probe type), as upstream
 * `pkg/kubelet/prober/worker.go`.
 *
 * Each tick (`doProbe`), in order:
 * 1. no cached pod status → keep going; terminal pod phase → stop;
 * 2. container status missing or without an id → keep going;
 * 3. a new container id → forget the old id's result, publish the initial result (readiness
 *    failure, liveness success, startup unknown), reset the streak and lift the hold;
 * 4. on hold (a liveness/startup failure was published for this id) → skip;
 * 5. container not running → publish failure (restartPolicy Never + terminated → stop);
 * 6. pod being deleted → liveness/startup publish success and stop;
 * 7. within `initialDelaySeconds` of the container's start → skip;
 * 8. startup probes stop probing once the container started; liveness/readiness do not run
 *    before it started;
 * 9. probe once; `unknown` is thrown away; the streak of equal outcomes must reach
 *    `successThreshold`/`failureThreshold` before a result is published; a published
 *    liveness/startup failure puts the worker on hold until the container id changes.
 *
 * `run(signal)` ticks every `periodSeconds` on the injected clock (after a random fraction of a
 * period when the kubelet just started) until `doProbe` says stop or the signal aborts, then
 * removes its result.
 *
 * @module
 */

import { probeDuration, probeTotal } from "../../metrics/mod.ts";
import type { CounterChild, HistogramChild } from "../../metrics/mod.ts";
import { containerReference, type PodEventRecorder } from "../pod_events.ts";
import type { Logger } from "../../log/mod.ts";
import type { PodStatusManager } from "../../status/mod.ts";
import type { ProbeResult } from "./probe_results.ts";
import {
  type ProbeHandlerDeps,
  type ProbeOutcome,
  runProbe,
} from "./probe_handlers.ts";
import {
  initialProbeResult,
  type ProbeResultChange,
  type ProbeResults,
  type ProbeType,
  removeProbeResult,
  setProbeResult,
} from "./probe_results.ts";
import {
  type Container,
  type ContainerStatus,
  type Pod,
  podFullName,
  type PodStatus,
  type Probe,
} from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Dependencies of {@linkcode ProbeWorker}. */
export interface ProbeWorkerDeps extends ProbeHandlerDeps {
  statuses: Pick<PodStatusManager, "getPodStatus">;
  results: ProbeResults;
  logger: Logger;
  /** `Unhealthy` and `ProbeWarning` events; omitted → none. */
  events?: PodEventRecorder;
  /** Called after a published result changed (not for the initial result of a new id). */
  onChange?: (change: ProbeResultChange) => void;
  /** Runs one attempt (default {@linkcode runProbe}); tests inject outcomes. */
  probe?: (
    probe: Probe,
    target: Parameters<typeof runProbe>[1],
    deps: Parameters<typeof runProbe>[2],
  ) => Promise<ProbeOutcome>;
}

/** Options of {@linkcode ProbeWorker}. */
export interface ProbeWorkerOptions {
  pod: Pod;
  container: Container;
  probeType: ProbeType;
  /** Delay the first probe by a random fraction of the period (kubelet just started). */
  jitter?: boolean;
  /** Random source for the jitter (default `Math.random`). */
  random?: () => number;
}

/** Probe fields with API defaults applied and thresholds clamped. */
export interface NormalizedProbe {
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

/** API defaults (period 10 s, timeout 1 s, thresholds 1/3); liveness/startup success is 1. */
export function normalizeProbe(
  probe: Probe,
  type: ProbeType,
): NormalizedProbe {
  const atLeast = (v: number | undefined, fallback: number, min: number) =>
    Math.max(min, Math.trunc(v ?? fallback) || fallback);
  return {
    initialDelaySeconds: Math.max(
      0,
      Math.trunc(probe.initialDelaySeconds ?? 0),
    ),
    periodSeconds: atLeast(probe.periodSeconds, 10, 1),
    timeoutSeconds: atLeast(probe.timeoutSeconds, 1, 1),
    successThreshold: type === "readiness"
      ? atLeast(probe.successThreshold, 1, 1)
      : 1,
    failureThreshold: atLeast(probe.failureThreshold, 3, 1),
  };
}

const PROBE_TYPE_NAMES: Record<ProbeType, string> = {
  liveness: "Liveness",
  readiness: "Readiness",
  startup: "Startup",
};

/** The probe of `type` a container declares, if any. */
export function containerProbe(
  container: Container,
  type: ProbeType,
): Probe | undefined {
  if (type === "liveness") return container.livenessProbe;
  if (type === "readiness") return container.readinessProbe;
  return container.startupProbe;
}

function findStatus(
  status: PodStatus,
  name: string,
): ContainerStatus | undefined {
  return status.containerStatuses?.find((c) => c.name === name) ??
    status.initContainerStatuses?.find((c) => c.name === name);
}

function stripRuntime(containerId: string): string {
  const i = containerId.indexOf("://");
  return i < 0 ? containerId : containerId.slice(i + 3);
}

/** One worker's `/metrics/probes` series, bound once. */
interface ProbeMetrics {
  results: Record<ProbeOutcome["result"], CounterChild>;
  duration: HistogramChild;
  remove(): void;
}

/** Upstream's result label values. */
const RESULT_LABELS: Record<ProbeOutcome["result"], string> = {
  success: "successful",
  failure: "failed",
  unknown: "unknown",
};

function probeMetrics(
  probeType: string,
  container: string,
  pod: Pod,
): ProbeMetrics {
  const name = pod.metadata.name ?? "";
  const namespace = pod.metadata.namespace ?? "";
  const uid = pod.metadata.uid ?? "";
  const labels = (
    result: ProbeOutcome["result"],
  ) => [probeType, RESULT_LABELS[result], container, name, namespace, uid];
  const results = {
    success: probeTotal.labels(...labels("success")),
    failure: probeTotal.labels(...labels("failure")),
    unknown: probeTotal.labels(...labels("unknown")),
  };
  const durationLabels = [probeType, container, name, namespace];
  return {
    results,
    duration: probeDuration.labels(...durationLabels),
    remove() {
      for (const result of ["success", "failure", "unknown"] as const) {
        probeTotal.remove(...labels(result));
      }
      probeDuration.remove(...durationLabels);
    },
  };
}

/** Probes one container with one probe type and publishes the result. */
export class ProbeWorker {
  #deps: ProbeWorkerDeps;
  #options: ProbeWorkerOptions;
  #probe: Probe;
  #spec: NormalizedProbe;
  #logger: Logger;
  #containerId = "";
  #lastResult: ProbeResult = "unknown";
  #resultRun = 0;
  #onHold = false;
  #warned = false;
  #metrics: ProbeMetrics;

  constructor(deps: ProbeWorkerDeps, options: ProbeWorkerOptions) {
    const probe = containerProbe(options.container, options.probeType);
    if (!probe) {
      throw new TypeError(
        `Container "${options.container.name}" has no ${options.probeType} probe`,
      );
    }
    this.#deps = deps;
    this.#options = options;
    this.#probe = probe;
    this.#spec = normalizeProbe(probe, options.probeType);
    this.#metrics = probeMetrics(
      PROBE_TYPE_NAMES[options.probeType],
      options.container.name,
      options.pod,
    );
    this.#logger = deps.logger.with({
      probeType: PROBE_TYPE_NAMES[options.probeType],
      pod: podFullName(options.pod),
      podUID: options.pod.metadata.uid ?? "",
      containerName: options.container.name,
    });
  }

  /** The probe settings in force (defaults applied). */
  get spec(): NormalizedProbe {
    return this.#spec;
  }

  /** Runtime id of the container being probed ("" before it is seen). */
  get containerId(): string {
    return this.#containerId;
  }

  /** Ticks until stopped or `signal` aborts; removes the published result on the way out. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.#deps;
    const periodMs = this.#spec.periodSeconds * 1000;
    try {
      if (this.#options.jitter) {
        const random = this.#options.random ?? Math.random;
        await clock.sleep(Math.floor(random() * periodMs), signal);
      }
      while (!signal.aborted && await this.doProbe(signal)) {
        await clock.sleep(periodMs, signal);
      }
    } catch (error) {
      if (!signal.aborted) {
        this.#logger.error("Probe worker failed", {
          err: errorMessage(error),
        });
      }
    } finally {
      this.#metrics.remove();
      if (this.#containerId) {
        removeProbeResult(
          this.#deps.results,
          this.#options.probeType,
          this.#containerId,
        );
      }
    }
  }

  /** One tick; false means the worker should stop. Rejects only when `signal` aborts. */
  async doProbe(signal: AbortSignal): Promise<boolean> {
    const { pod, container, probeType } = this.#options;
    const status = this.#deps.statuses.getPodStatus(pod.metadata.uid ?? "");
    if (!status) {
      this.#logger.v(3).info("No status for pod");
      return true;
    }
    if (status.phase === "Failed" || status.phase === "Succeeded") {
      this.#logger.v(3).info("Pod is terminated, exiting probe worker", {
        phase: status.phase,
      });
      return false;
    }
    const c = findStatus(status, container.name);
    if (!c?.containerID) {
      this.#logger.v(3).info("Probe target container not found");
      return true;
    }
    const id = stripRuntime(c.containerID);
    if (id !== this.#containerId) {
      if (this.#containerId) {
        removeProbeResult(this.#deps.results, probeType, this.#containerId);
      }
      this.#containerId = id;
      setProbeResult(
        this.#deps.results,
        probeType,
        id,
        initialProbeResult(probeType),
      );
      this.#lastResult = "unknown";
      this.#resultRun = 0;
      this.#onHold = false;
    }
    if (this.#onHold) return true;
    if (!c.state.running) {
      this.#logger.v(3).info("Non-running container probed");
      this.#publish("failure");
      return c.state.terminated === undefined ||
        pod.spec.restartPolicy !== "Never";
    }
    if (pod.metadata.deletionTimestamp && probeType !== "readiness") {
      this.#publish("success");
      return false;
    }
    const startedAt = Date.parse(c.state.running.startedAt ?? "");
    const now = this.#deps.clock.now();
    if (
      Number.isFinite(startedAt) &&
      Math.trunc((now - startedAt) / 1000) < this.#spec.initialDelaySeconds
    ) return true;
    if (c.started) {
      if (probeType === "startup") return true;
    } else if (probeType !== "startup") {
      return true;
    }
    const run = this.#deps.probe ?? runProbe;
    const started = performance.now();
    const outcome = await run(this.#probe, {
      pod,
      status,
      container,
      containerId: id,
    }, { ...this.#deps, signal });
    this.#metrics.duration.observe((performance.now() - started) / 1000);
    this.#metrics.results[outcome.result].inc();
    this.#record(outcome);
    return true;
  }

  #record(outcome: ProbeOutcome): void {
    const { result, output } = outcome;
    const { pod, container, probeType } = this.#options;
    // "Liveness probe failed: ...", as upstream's probe type names print
    const kind = probeType[0]!.toUpperCase() + probeType.slice(1);
    const unhealthy = (message: string) =>
      this.#deps.events?.event(
        containerReference(pod, container.name),
        "Warning",
        "Unhealthy",
        message,
      );
    if (result === "unknown") {
      if (outcome.warning && !this.#warned) {
        this.#warned = true;
        this.#logger.warn(outcome.warning, { output });
      } else {
        this.#logger.v(1).info("Probe errored", { output });
        unhealthy(
          `${kind} probe errored and resulted in unknown state: ${output}`,
        );
      }
      return;
    }
    if (result === "failure") {
      this.#logger.v(1).info("Probe failed", { probeResult: result, output });
      unhealthy(`${kind} probe failed: ${output}`);
    } else if (outcome.probeWarning) {
      // upstream prober.probe: probe.Warning records ProbeWarning on every attempt (the
      // event correlator then counts repeats) and counts as success
      this.#deps.events?.event(
        containerReference(pod, container.name),
        "Warning",
        "ProbeWarning",
        `${kind} probe warning: ${output}`,
      );
      this.#logger.v(3).info("Probe succeeded with a warning", { output });
    } else {
      this.#logger.v(3).info("Probe succeeded", { probeResult: result });
    }
    if (this.#lastResult === result) this.#resultRun++;
    else {
      this.#lastResult = result;
      this.#resultRun = 1;
    }
    const threshold = result === "failure"
      ? this.#spec.failureThreshold
      : this.#spec.successThreshold;
    if (this.#resultRun < threshold) return;
    this.#publish(result);
    if (result === "failure" && this.#options.probeType !== "readiness") {
      // the container will be restarted: stop probing until a new container id shows up
      this.#onHold = true;
      this.#resultRun = 0;
    }
  }

  #publish(result: ProbeResult): void {
    const { probeType, pod, container } = this.#options;
    const id = this.#containerId;
    if (!setProbeResult(this.#deps.results, probeType, id, result)) return;
    this.#deps.onChange?.({
      podUid: pod.metadata.uid ?? "",
      containerName: container.name,
      containerId: id,
      probeType,
      result,
    });
  }
}
