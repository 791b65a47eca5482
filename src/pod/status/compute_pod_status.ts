/**
 * Builds the v1 `PodStatus` the kubelet reports for a pod from the runtime's view of it, the
 * latest start failures of the syncer and the previous status (kubelet's
 * `generateAPIPodStatus`/`convertToAPIContainerStatuses`).
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type {
  Container,
  ContainerState,
  ContainerStatus,
  ContainerView,
  Pod,
  PodCondition,
  PodRuntimeStatus,
  PodStatus,
  ResourceRequirements,
  SyncResult,
} from "../types.ts";
import { isSidecar } from "../types.ts";
import {
  DEADLINE_EXCEEDED_MESSAGE,
  DEADLINE_EXCEEDED_REASON,
  pastActiveDeadline,
} from "./active_deadline.ts";
import { computePodPhase, type PodPhaseOptions } from "./pod_phase.ts";
import { podReadyCondition } from "./readiness_gates.ts";
import {
  milliCpuToQuota,
  milliCpuToShares,
  podQOSClass,
} from "../cgroups/pod_resources.ts";
import { milliValue, quantityValue } from "../../util/quantity.ts";
import { mergeConditions, rfc3339 } from "./pod_conditions.ts";

/** Options of {@linkcode computePodStatus}. */
export interface ComputePodStatusOptions {
  clock: Clock;
  /**
   * Latest failed `StartContainer` results by container name (the kubelet's reason cache); a
   * container that should be restarted shows as waiting with that reason.
   */
  syncResults?: readonly SyncResult[];
  /** Previous status (for start time, last termination and condition transition times). */
  previous?: PodStatus;
  /** The pod is terminating: containers will not be restarted. */
  podIsTerminal?: boolean;
  /** Static pods keep a non-terminal phase when `podIsTerminal` alone would change it. */
  isStatic?: boolean;
  /** Node addresses for `hostIP`/`hostIPs` (and the pod IP of host-network pods). */
  hostIPs?: string[];
  /** Readiness by container id (from the prober); missing → ready when running, unless probed. */
  readiness?: ReadonlyMap<string, boolean>;
  /** Startup results by container id; missing → started when running, unless probed. */
  started?: ReadonlyMap<string, boolean>;
  /** Runtime name for container IDs, e.g. "containerd" → `containerd://<id>`. */
  runtimeName?: string;
  /**
   * In-place resize: the pod's `PodResizePending`/`PodResizeInProgress` conditions (with
   * their own times and generation) and what was last applied to each container (its
   * memory request shows in the status); omitted → none and the allocation.
   */
  resize?: {
    conditions: readonly PodCondition[];
    actuated(name: string): ResourceRequirements | undefined;
  };
}

function iso(ms: number): string | undefined {
  return ms > 0 ? rfc3339(ms) : undefined;
}

function terminatedState(
  view: ContainerView,
  runtimeName: string,
): ContainerState {
  const reason = view.reason || (view.exitCode === 0 ? "Completed" : "Error");
  const terminated: NonNullable<ContainerState["terminated"]> = {
    exitCode: view.exitCode,
    reason,
    containerID: `${runtimeName}://${view.id}`,
  };
  if (view.message) terminated.message = view.message;
  const started = iso(view.startedAt);
  const finished = iso(view.finishedAt);
  if (started) terminated.startedAt = started;
  if (finished) terminated.finishedAt = finished;
  return { terminated };
}

function stateOf(view: ContainerView, runtimeName: string): ContainerState {
  switch (view.state) {
    case "running": {
      const startedAt = iso(view.startedAt);
      return { running: startedAt ? { startedAt } : {} };
    }
    case "exited":
      return terminatedState(view, runtimeName);
    case "created":
      return { waiting: { reason: "ContainerCreating" } };
    default:
      return { waiting: {} };
  }
}

function wouldRestart(
  pod: Pod,
  c: Container,
  view: ContainerView | undefined,
  init: boolean,
): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  if (!view || view.state !== "exited") return view?.state !== "running";
  if (init && !isSidecar(c)) {
    return view.exitCode !== 0 &&
      (pod.spec.restartPolicy ?? "Always") !== "Never";
  }
  const policy = init ? "Always" : pod.spec.restartPolicy ?? "Always";
  if (policy === "Never") return false;
  return !(policy === "OnFailure" && view.exitCode === 0);
}

interface ConvertContext {
  pod: Pod;
  runtime: PodRuntimeStatus;
  options: ComputePodStatusOptions;
  failures: Map<string, SyncResult>;
  runtimeName: string;
}

function convert(
  ctx: ConvertContext,
  containers: Container[],
  init: boolean,
  old: ContainerStatus[] | undefined = init
    ? ctx.options.previous?.initContainerStatuses
    : ctx.options.previous?.containerStatuses,
): ContainerStatus[] {
  const { pod, runtime, options } = ctx;
  const hasInits = (pod.spec.initContainers ?? []).length > 0;
  return containers.map((c) => {
    const views = runtime.containers.filter((v) => v.name === c.name);
    const newest = views[0];
    const oldStatus = old?.find((s) => s.name === c.name);
    const status: ContainerStatus = {
      name: c.name,
      state: {
        waiting: { reason: hasInits ? "PodInitializing" : "ContainerCreating" },
      },
      lastState: {},
      ready: false,
      started: false,
      restartCount: 0,
      image: c.image ?? "",
      imageID: "",
    };
    if (newest) {
      status.state = stateOf(newest, ctx.runtimeName);
      status.restartCount = newest.restartCount;
      status.imageID = newest.imageRef;
      status.containerID = `${ctx.runtimeName}://${newest.id}`;
      const previous = views[1];
      if (previous && previous.state === "exited") {
        status.lastState = terminatedState(previous, ctx.runtimeName);
      } else if (oldStatus?.lastState.terminated && newest.restartCount > 0) {
        status.lastState = oldStatus.lastState;
      }
    } else if (oldStatus?.lastState.terminated) {
      status.lastState = oldStatus.lastState;
      status.restartCount = oldStatus.restartCount;
    }
    const failure = ctx.failures.get(c.name);
    const initDone = init && !isSidecar(c) &&
      newest?.state === "exited" &&
      newest.exitCode === 0;
    if (failure && !initDone && wouldRestart(pod, c, newest, init)) {
      if (status.state.terminated) status.lastState = status.state;
      status.state = {
        waiting: { reason: failure.reason!, message: failure.message ?? "" },
      };
    }
    const running = status.state.running !== undefined;
    const probed = (
      m: ReadonlyMap<string, boolean> | undefined,
      hasProbe: boolean,
    ) => newest && m?.has(newest.id) ? m.get(newest.id)! : !hasProbe;
    status.started = running &&
      probed(options.started, c.startupProbe !== undefined);
    if (newest) {
      // upstream `convertContainerStatusResources`: `pod` is the pod as allocated
      status.resources = running
        ? runningResources(
          c,
          newest,
          oldStatus,
          options.resize?.actuated(c.name),
        )
        : copyResources(c.resources);
      const requests = c.resources?.requests;
      if (requests && Object.keys(requests).length) {
        status.allocatedResources = { ...requests };
      }
    }
    if (c.volumeMounts?.length) {
      // read-only mounts are never recursively so here: containerd 1.6 cannot
      status.volumeMounts = c.volumeMounts.map((m) => ({
        name: m.name,
        mountPath: m.mountPath,
        ...(m.readOnly
          ? { readOnly: true, recursiveReadOnly: "Disabled" }
          : {}),
      }));
    }
    if (init && !isSidecar(c)) {
      status.ready = status.state.terminated?.exitCode === 0;
    } else {
      status.ready = running && status.started &&
        probed(options.readiness, c.readinessProbe !== undefined);
    }
    return status;
  });
}

function copyResources(
  r: ResourceRequirements | undefined,
): ResourceRequirements {
  const out: ResourceRequirements = {};
  if (r?.limits && Object.keys(r.limits).length) out.limits = { ...r.limits };
  if (r?.requests && Object.keys(r.requests).length) {
    out.requests = { ...r.requests };
  }
  return out;
}

/**
 * What a running container's status reports as its resources (upstream
 * `convertContainerStatusResources` with in-place resize on): its allocation, with the CPU
 * limit, CPU request and memory limit the runtime reports it applied (the previous status's
 * figures of the same container when the runtime reports none) and the memory request last
 * applied. A resize not yet applied therefore never shows up here.
 */
function runningResources(
  c: Container,
  view: ContainerView | undefined,
  old: ContainerStatus | undefined,
  actuated: ResourceRequirements | undefined,
): ResourceRequirements {
  const out = copyResources(c.resources);
  const applied = view?.resources;
  if (applied) readBackRuntimeFigures(out, applied);
  else {
    const sameContainer = view !== undefined && old?.state.running &&
      old.containerID?.endsWith(`://${view.id}`);
    for (const kind of ["limits", "requests"] as const) {
      for (const name of ["cpu", "memory"]) {
        if (kind === "requests" && name === "memory") continue;
        const kept = sameContainer ? old?.resources?.[kind]?.[name] : undefined;
        if (out[kind] && kept !== undefined) out[kind]![name] = kept;
      }
    }
  }
  const memoryRequest = actuated?.requests?.["memory"];
  if (out.requests?.["memory"] !== undefined && actuated) {
    if (memoryRequest === undefined) delete out.requests["memory"];
    else out.requests["memory"] = memoryRequest;
  }
  return out;
}

/** Overwrites cpu/memory values the runtime reports differently (upstream's quota, shares and memory read-back). */
function readBackRuntimeFigures(
  out: ResourceRequirements,
  applied: NonNullable<ContainerView["resources"]>,
): void {
  const limitCpu = out.limits?.["cpu"];
  if (limitCpu !== undefined && applied.cpuQuota > 0 && applied.cpuPeriod > 0) {
    const milli = Math.trunc(applied.cpuQuota * 1000 / applied.cpuPeriod);
    const spec = milliValue(limitCpu);
    if (
      (milli > MIN_MILLI_CPU_LIMIT || spec > MIN_MILLI_CPU_LIMIT) &&
      milliCpuToQuota(spec, applied.cpuPeriod) !== applied.cpuQuota
    ) out.limits!["cpu"] = `${milli}m`;
  }
  const limitMemory = out.limits?.["memory"];
  if (
    limitMemory !== undefined && applied.memoryLimitBytes > 0 &&
    quantityValue(limitMemory) !== applied.memoryLimitBytes
  ) out.limits!["memory"] = String(applied.memoryLimitBytes);
  const requestCpu = out.requests?.["cpu"];
  if (requestCpu !== undefined && applied.cpuShares > 0) {
    const milli = Math.ceil(applied.cpuShares * 1000 / 1024);
    const spec = milliValue(requestCpu);
    if (
      (milli > MIN_SHARES || spec > MIN_SHARES) &&
      milliCpuToShares(spec) !== applied.cpuShares
    ) out.requests!["cpu"] = `${milli}m`;
  }
}

/** Upstream `cm.MinMilliCPULimit` and `cm.MinShares`: below them the runtime figure is not read back. */
const MIN_MILLI_CPU_LIMIT = 10;
const MIN_SHARES = 2;

function listMessage(prefix: string, names: string[]): string {
  return `containers with ${prefix} status: [${names.join(" ")}]`;
}

function buildConditions(
  pod: Pod,
  runtime: PodRuntimeStatus,
  status: PodStatus,
): PodCondition[] {
  const phase = status.phase;
  const inits = status.initContainerStatuses ?? [];
  const regular = status.containerStatuses ?? [];
  const sandbox = runtime.sandboxes[0];
  const sandboxReady = sandbox !== undefined && sandbox.ready &&
    (pod.spec.hostNetwork === true || sandbox.ip !== "");
  const conditions: PodCondition[] = [
    {
      type: "PodReadyToStartContainers",
      status: sandboxReady ? "True" : "False",
    },
  ];

  const initSpecs = pod.spec.initContainers ?? [];
  const regularStarted = regular.some((s) =>
    s.state.running || s.state.terminated || s.lastState.terminated
  );
  const unknownInit: string[] = [];
  const unreadyInit: string[] = [];
  for (const c of initSpecs) {
    const s = inits.find((x) => x.name === c.name);
    if (!s) unknownInit.push(c.name);
    else if (isSidecar(c) ? !s.started : !s.ready) {
      unreadyInit.push(c.name);
    }
  }
  // upstream's order: a succeeded pod first, then one whose app containers have started
  if (phase === "Succeeded" && unknownInit.length === 0) {
    conditions.push({
      type: "Initialized",
      status: "True",
      reason: "PodCompleted",
    });
  } else if (
    initSpecs.length === 0 || regularStarted ||
    (unknownInit.length + unreadyInit.length === 0)
  ) {
    conditions.push({ type: "Initialized", status: "True" });
  } else {
    const parts: string[] = [];
    if (unknownInit.length) parts.push(listMessage("unknown", unknownInit));
    if (unreadyInit.length) parts.push(listMessage("incomplete", unreadyInit));
    conditions.push({
      type: "Initialized",
      status: "False",
      reason: "ContainersNotInitialized",
      message: parts.join(", "),
    });
  }

  const unknown: string[] = [];
  const unready: string[] = [];
  const watched = [
    ...initSpecs.filter(isSidecar),
    ...pod.spec.containers,
  ];
  for (const c of watched) {
    const s = (isSidecar(c) ? inits : regular).find((x) => x.name === c.name);
    if (!s) unknown.push(c.name);
    else if (!s.ready) unready.push(c.name);
  }
  let ready: Omit<PodCondition, "type">;
  if (phase === "Succeeded" && unknown.length === 0) {
    ready = { status: "False", reason: "PodCompleted" };
  } else if (unknown.length + unready.length > 0) {
    const parts: string[] = [];
    if (unknown.length) parts.push(listMessage("unknown", unknown));
    if (unready.length) parts.push(listMessage("unready", unready));
    ready = {
      status: "False",
      reason: "ContainersNotReady",
      message: parts.join(", "),
    };
  } else {
    ready = { status: "True" };
  }
  // readiness gates are conditions others write through the API server; Ready comes before
  // ContainersReady in upstream's list
  conditions.push({
    type: "Ready",
    ...podReadyCondition(pod, ready, pod.status?.conditions ?? []),
  }, { type: "ContainersReady", ...ready });
  conditions.push({ type: "PodScheduled", status: "True" });
  return conditions;
}

/** Computes the v1 PodStatus of `pod` from its runtime view. Pure apart from `clock.now()`. */
/**
 * Whether a regular container exists in the pod's current sandbox: the newest one, when it is
 * ready (upstream's active containers, `getPodContainerStatuses`).
 */
function hasActiveRegularContainer(
  pod: Pod,
  runtime: PodRuntimeStatus,
): boolean {
  const current = runtime.sandboxes[0];
  if (!current?.ready) return false;
  const regular = new Set(pod.spec.containers.map((c) => c.name));
  return runtime.containers.some((c) =>
    c.sandboxId === current.id && regular.has(c.name)
  );
}

function isTerminalPhase(phase: string | undefined): boolean {
  return phase === "Succeeded" || phase === "Failed";
}

export function computePodStatus(
  pod: Pod,
  runtime: PodRuntimeStatus,
  options: ComputePodStatusOptions,
): PodStatus {
  const failures = new Map<string, SyncResult>();
  for (const r of options.syncResults ?? []) {
    if (r.action === "StartContainer" && r.reason) failures.set(r.target, r);
  }
  const ctx: ConvertContext = {
    pod,
    runtime,
    options,
    failures,
    runtimeName: options.runtimeName ?? "containerd",
  };
  const initContainerStatuses = convert(
    ctx,
    pod.spec.initContainers ?? [],
    true,
  );
  // app container statuses by name, as upstream lists them; init ones keep the spec's order
  const containerStatuses = convert(ctx, pod.spec.containers, false).sort((
    a,
    b,
  ) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const phaseOptions: PodPhaseOptions = {
    podHasInitialized: hasActiveRegularContainer(pod, runtime),
  };
  if (options.podIsTerminal !== undefined) {
    phaseOptions.podIsTerminal = options.podIsTerminal;
  }
  if (options.isStatic !== undefined) phaseOptions.isStatic = options.isStatic;
  let phase = computePodPhase(pod, {
    init: initContainerStatuses,
    regular: containerStatuses,
  }, phaseOptions);
  // upstream's three-way merge: a computed terminal phase stands, otherwise a terminal phase
  // we gave before stays, else one the API server holds
  const previous = options.previous;
  const apiPhase = pod.status?.phase;
  if (!isTerminalPhase(phase)) {
    if (isTerminalPhase(previous?.phase)) phase = previous!.phase!;
    else if (isTerminalPhase(apiPhase)) phase = apiPhase!;
  }

  const status: PodStatus = {
    phase,
    containerStatuses,
    qosClass: podQOSClass(pod),
  };
  if ((pod.spec.initContainers ?? []).length > 0) {
    status.initContainerStatuses = initContainerStatuses;
  }
  const ephemeral = pod.spec.ephemeralContainers ?? [];
  if (ephemeral.length > 0) {
    // upstream's prober never looks at them: never ready, and no `started`
    status.ephemeralContainerStatuses = convert(
      ctx,
      ephemeral,
      false,
      previous?.ephemeralContainerStatuses,
    ).map(({ started: _unprobed, ...s }) => ({ ...s, ready: false }));
  }
  const hostIPs = options.hostIPs ?? [];
  if (hostIPs.length > 0) {
    status.hostIP = hostIPs[0]!;
    status.hostIPs = hostIPs.map((ip) => ({ ip }));
  }
  const sandbox = runtime.sandboxes[0];
  const podIPs = pod.spec.hostNetwork
    ? hostIPs
    : sandbox && sandbox.ip
    ? [sandbox.ip, ...sandbox.additionalIps]
    : [];
  if (podIPs.length > 0) {
    status.podIP = podIPs[0]!;
    status.podIPs = podIPs.map((ip) => ({ ip }));
  } else if (previous?.podIP && (phase === "Succeeded" || phase === "Failed")) {
    status.podIP = previous.podIP;
    if (previous.podIPs) status.podIPs = previous.podIPs;
  }
  status.startTime = previous?.startTime ?? rfc3339(options.clock.now());
  if (previous && previous.phase === phase) {
    if (previous.reason) status.reason = previous.reason;
    if (previous.message) status.message = previous.message;
  }
  // upstream's eviction override (activeDeadlineHandler), on the start time known before
  // this sync: the status cache's, else the API server's; it holds while the pod stops, so a
  // container that exits 0 on its SIGTERM does not turn the pod Succeeded
  if (
    pastActiveDeadline(
      pod,
      previous?.startTime ?? pod.status?.startTime,
      options.clock.now(),
    )
  ) {
    status.phase = "Failed";
    status.reason = DEADLINE_EXCEEDED_REASON;
    status.message = DEADLINE_EXCEEDED_MESSAGE;
  }
  // a terminal phase the API server holds never changes (upstream forces it back)
  if (isTerminalPhase(apiPhase)) status.phase = apiPhase!;
  const conditions = buildConditions(pod, runtime, status);
  status.conditions = mergeConditions(
    conditions,
    previous?.conditions,
    options.clock,
  );
  const generation = pod.metadata.generation;
  if (generation !== undefined) {
    status.observedGeneration = generation;
    for (const c of status.conditions) c.observedGeneration = generation;
  }
  // upstream `determinePodResizeStatus`: a terminal pod carries none
  const terminal = status.phase === "Succeeded" || status.phase === "Failed";
  if (!terminal) {
    for (const c of options.resize?.conditions ?? []) {
      status.conditions.push({ ...c });
    }
  }
  return status;
}
