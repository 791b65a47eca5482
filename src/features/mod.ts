/**
 * Feature gates: the v1.34 kubelet gate table and a mutable gate set with
 * upstream `SetFromMap` semantics. Owns no I/O and no global state.
 * @module
 */
export {
  createFeatureGates,
  FeatureGateError,
  FeatureGates,
} from "./feature_gates.ts";
export type { FeatureSpec, FeatureStage } from "./known_gates.ts";
export { KNOWN_FEATURES } from "./known_gates.ts";
