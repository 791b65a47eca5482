/**
 * Events: the recorder the kubelet reports node and pod lifecycle through, client-go's
 * correlator (aggregation, counting, spam filter) and the core/v1 Event shape.
 * @module
 */
export type {
  Event,
  EventRecorder,
  EventSink,
  EventType,
  ObjectReference,
} from "./types.ts";
export {
  type CorrelateResult,
  CORRELATOR_DEFAULTS,
  type CorrelatorOptions,
  EventCorrelator,
} from "./event_correlator.ts";
export {
  createEventRecorder,
  type EventRecorderDeps,
  type EventRecorderOptions,
  nodeReference,
  type RunningEventRecorder,
} from "./event_recorder.ts";
