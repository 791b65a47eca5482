/**
 * The kubelet's own recorded metrics under upstream's names, label names and bucket bounds
 * (pkg/kubelet/metrics and pkg/kubelet/prober/metrics). One process-wide registry, as
 * upstream's: the recorders (CRI client, PLEG, pod workers, prober) add to the series here and
 * `/metrics` and `/metrics/probes` write them.
 *
 * @module
 */

import { DEFAULT_BUCKETS, exponentialBuckets, Registry } from "./registry.ts";

/** Upstream's pod startup bounds (seconds): round numbers, roughly exponential. */
const POD_STARTUP_BUCKETS = [
  0.5,
  1,
  2,
  3,
  4,
  5,
  6,
  8,
  10,
  20,
  30,
  45,
  60,
  120,
  180,
  240,
  300,
  360,
  480,
  600,
  900,
  1200,
  1800,
  2700,
  3600,
];

/** `/metrics` (after the gauges read at scrape time). */
export const kubeletRegistry = new Registry();

export const podStartDuration = kubeletRegistry.histogram({
  name: "kubelet_pod_start_duration_seconds",
  help:
    "[ALPHA] Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run",
  buckets: POD_STARTUP_BUCKETS,
});
podStartDuration.labels();

export const podWorkerDuration = kubeletRegistry.histogram({
  name: "kubelet_pod_worker_duration_seconds",
  help:
    "[ALPHA] Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync",
  labelNames: ["operation_type"],
  buckets: DEFAULT_BUCKETS,
});

export const plegRelistDuration = kubeletRegistry.histogram({
  name: "kubelet_pleg_relist_duration_seconds",
  help: "[ALPHA] Duration in seconds for relisting pods in PLEG.",
  buckets: DEFAULT_BUCKETS,
});
plegRelistDuration.labels();

export const plegRelistInterval = kubeletRegistry.histogram({
  name: "kubelet_pleg_relist_interval_seconds",
  help: "[ALPHA] Interval in seconds between relisting in PLEG.",
  buckets: DEFAULT_BUCKETS,
});
plegRelistInterval.labels();

export const runtimeOperations = kubeletRegistry.counter({
  name: "kubelet_runtime_operations_total",
  help: "[ALPHA] Cumulative number of runtime operations by operation type.",
  labelNames: ["operation_type"],
});

export const runtimeOperationsErrors = kubeletRegistry.counter({
  name: "kubelet_runtime_operations_errors_total",
  help:
    "[ALPHA] Cumulative number of runtime operation errors by operation type.",
  labelNames: ["operation_type"],
});

export const runtimeOperationsDuration = kubeletRegistry.histogram({
  name: "kubelet_runtime_operations_duration_seconds",
  help:
    "[ALPHA] Duration in seconds of runtime operations. Broken down by operation type.",
  labelNames: ["operation_type"],
  buckets: exponentialBuckets(0.005, 2.5, 14),
});

export const startedPods = kubeletRegistry.counter({
  name: "kubelet_started_pods_total",
  help: "[ALPHA] Cumulative number of pods started",
});
startedPods.labels();

export const startedUserNamespacedPods = kubeletRegistry.counter({
  name: "kubelet_started_user_namespaced_pods_total",
  help:
    "[ALPHA] Cumulative number of pods with user namespaces started. This metric will only be collected on Linux.",
});
startedUserNamespacedPods.labels();

export const startedUserNamespacedPodsErrors = kubeletRegistry.counter({
  name: "kubelet_started_user_namespaced_pods_errors_total",
  help:
    "[ALPHA] Cumulative number of errors when starting pods with user namespaces. This metric will only be collected on Linux.",
});
startedUserNamespacedPodsErrors.labels();

export const startedContainers = kubeletRegistry.counter({
  name: "kubelet_started_containers_total",
  help: "[ALPHA] Cumulative number of containers started",
  labelNames: ["container_type"],
});

/** `/metrics/probes`. */
export const probeRegistry = new Registry();

export const probeTotal = probeRegistry.counter({
  name: "prober_probe_total",
  help:
    "[ALPHA] Cumulative number of a liveness, readiness or startup probe for a container by result.",
  labelNames: [
    "probe_type",
    "result",
    "container",
    "pod",
    "namespace",
    "pod_uid",
  ],
});

export const probeDuration = probeRegistry.histogram({
  name: "prober_probe_duration_seconds",
  help: "[ALPHA] Duration in seconds for a probe response.",
  labelNames: ["probe_type", "container", "pod", "namespace"],
  buckets: DEFAULT_BUCKETS,
});

/**
 * The CRI method's operation name as upstream's instrumented service records it
 * (`runPodSandbox` → `run_podsandbox`, `listContainerStats` → `list_container_stats`).
 */
export function operationType(method: string): string {
  return method.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replaceAll(
    "pod_sandbox",
    "podsandbox",
  );
}
