/** What each part of the simulated runtime is built from. */

import type { Clock } from "../../clock/mod.ts";
import type { SimCalls } from "./_calls.ts";
import type { SimImageStore } from "./_images.ts";
import type { SimStore } from "./_store.ts";
import type { SimScenario } from "./scenario.ts";

/** The shared pieces the RPC parts of `SimRuntime` hold. */
export interface SimDeps {
  /** Call log, injected errors, cancellation, closed state. */
  calls: SimCalls;
  /** Time source for delays, exits and timestamps. */
  clock: Clock;
  /** Scripted behaviour. */
  scenario: SimScenario;
  /** Sandboxes, containers, name reservations. */
  store: SimStore;
  /** Present images and pull rules. */
  images: SimImageStore;
}
