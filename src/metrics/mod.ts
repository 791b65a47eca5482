/**
 * The kubelet's Prometheus metrics: a small registry (`registry.ts`) and the recorded series
 * under upstream's names (`kubelet_metrics.ts`).
 *
 * @module
 */

export {
  type Counter,
  CounterChild,
  DEFAULT_BUCKETS,
  escapeLabel,
  exponentialBuckets,
  type Histogram,
  HistogramChild,
  Registry,
} from "./registry.ts";
export {
  kubeletRegistry,
  operationType,
  plegRelistDuration,
  plegRelistInterval,
  podStartDuration,
  podWorkerDuration,
  probeDuration,
  probeRegistry,
  probeTotal,
  runtimeOperations,
  runtimeOperationsDuration,
  runtimeOperationsErrors,
  startedContainers,
  startedPods,
  startedUserNamespacedPods,
  startedUserNamespacedPodsErrors,
} from "./kubelet_metrics.ts";
