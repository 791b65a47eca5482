/**
 * The simulated CRI runtime: a real in-memory state machine implementing
 * `RuntimeService` and `ImageService` (containerd 1.6 semantics and error
 * shapes), driven by scenario data and an injected clock. Selected by the
 * kubelet with a `sim://` endpoint. It must not touch the host: no files,
 * processes or network.
 *
 * @module
 */

/** Builds a simulated runtime from options (clock, scenario, logger). */
export {
  createSimRuntime,
  SIM_RUNTIME_NAME,
  SimRuntime,
} from "./sim_runtime.ts";
export type { SimRuntimeOptions } from "./sim_runtime.ts";
/** Endpoint helpers: `isSimEndpoint("sim://default")`, factory from an endpoint. */
export {
  createSimRuntimeForEndpoint,
  isSimEndpoint,
  loadSimScenario,
} from "./endpoint.ts";
/** The pause image every simulated runtime starts with. */
export { SIM_PAUSE_IMAGE } from "./_images.ts";
/**
 * Scenario data types. The zod schemas that check scenario files stay in
 * `scenario.ts`, loaded only when a scenario file is read.
 */
export type {
  SimContainerBehavior,
  SimImageBehavior,
  SimScenario,
} from "./scenario.ts";
/** Any CRI method name of either service (the call log's entries). */
export type { CriMethodName as SimMethod } from "../types.ts";
export { normalizeImageRef } from "./_images.ts";
