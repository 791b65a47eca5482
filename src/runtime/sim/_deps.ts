/**
 * What the RPC parts of the simulated runtime are built from, and the shape
 * of the handlers they provide.
 */

import type { Clock } from "../../clock/mod.ts";
import type {
  CallOptions,
  CriMethodName,
  CriRequest,
  CriRuntime,
} from "../types.ts";
import type { SimImageStore } from "./_images.ts";
import type { SimStore } from "./_store.ts";
import type { SimScenario } from "./scenario.ts";

/** The shared pieces the RPC parts of `SimRuntime` hold. */
export interface SimDeps {
  /** Time source for delays, exits and timestamps. */
  clock: Clock;
  /** Scripted behaviour. */
  scenario: SimScenario;
  /** Sandboxes, containers, name reservations. */
  store: SimStore;
  /** Present images and pull rules. */
  images: SimImageStore;
}

/**
 * A part's implementation of CRI method `K`, called once `SimCalls` has
 * admitted the call (logged, not canceled, no injected error). A unary
 * handler may answer synchronously; `SimRuntime` makes every call async.
 */
export type SimHandler<K extends CriMethodName> = (
  request: CriRequest<K>,
  options: CallOptions | undefined,
) => ReturnType<CriRuntime[K]> extends Promise<infer R> ? R | Promise<R>
  : ReturnType<CriRuntime[K]>;

/** Handlers by method name; each RPC part implements some of them. */
export type SimHandlers = { [K in CriMethodName]: SimHandler<K> };
