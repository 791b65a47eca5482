/**
 * The simulated CRI runtime: `RuntimeService` + `ImageService` over in-memory
 * state, put together from small parts, each with one job:
 *
 * - `SimCalls` (`_calls.ts`): call log, injected errors, cancellation, close;
 * - `SimStore` (`_store.ts`): sandboxes, containers, names, exits;
 * - `SimImageStore` (`_images.ts`): present images and pull rules;
 * - the RPC parts: `SimLifecycle` (`_lifecycle.ts`), `SimQueries`
 *   (`_queries.ts`), `SimImageService` (`_image_service.ts`) and
 *   `SimRuntimeInfo` (`_runtime_info.ts`).
 *
 * `SimRuntime` holds them. For each CRI method, by the names in the generated
 * service descriptors, it admits the call through `SimCalls` and then hands
 * it to the RPC part that implements it; the parts know nothing of call logs
 * or injected errors.
 */

import type { DescMethod } from "@bufbuild/protobuf";
import { type Clock, systemClock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import {
  ImageService as ImageServiceDesc,
  RuntimeService as RuntimeServiceDesc,
} from "../gen/api_pb.ts";
import type { CallOptions, CriMethodName, CriRuntime } from "../types.ts";
import type { SimDeps, SimHandlers } from "./_deps.ts";
import { SimCalls } from "./_calls.ts";
import { SIM_PAUSE_IMAGE, SimImageStore } from "./_images.ts";
import { SimImageService } from "./_image_service.ts";
import { SimLifecycle } from "./_lifecycle.ts";
import { SimQueries } from "./_queries.ts";
import { SimRuntimeInfo } from "./_runtime_info.ts";
import type { SimContainer, SimSandbox } from "./_state.ts";
import { SimStore } from "./_store.ts";
import type { SimScenario } from "./scenario.ts";

export { SIM_RUNTIME_NAME } from "./_runtime_info.ts";

/** Options of {@linkcode createSimRuntime}. */
export interface SimRuntimeOptions {
  /** Time source for delays, exits and timestamps (default: the system clock). */
  clock?: Clock;
  /** Scripted behaviour (default: every image pulls, containers follow their command). */
  scenario?: SimScenario;
  logger?: Logger;
}

type RpcParts = SimLifecycle & SimQueries & SimImageService & SimRuntimeInfo;
/** Compile-time check: every CRI method has a part that implements it. */
const EVERY_RPC_HAS_A_PART: Exclude<CriMethodName, keyof RpcParts> extends never
  ? true
  : never = true;

const RPCS: readonly DescMethod[] = [
  ...RuntimeServiceDesc.methods,
  ...ImageServiceDesc.methods,
];

/** The CRI methods, taken per instance from the RPC parts. */
export interface SimRuntime extends CriRuntime {}

/** The simulated runtime; build it with {@linkcode createSimRuntime}. */
export class SimRuntime {
  readonly #calls: SimCalls;
  readonly #store: SimStore;
  readonly #info: SimRuntimeInfo;

  constructor(options: SimRuntimeOptions = {}) {
    const clock = options.clock ?? systemClock;
    const scenario = options.scenario ?? {};
    const deps: SimDeps = {
      clock,
      scenario,
      store: new SimStore(clock),
      images: new SimImageStore(
        scenario,
        scenario.preloadedImages ?? [SIM_PAUSE_IMAGE],
      ),
    };
    this.#calls = new SimCalls(options.logger);
    this.#store = deps.store;
    this.#info = new SimRuntimeInfo(deps);
    const parts = [
      new SimLifecycle(deps),
      new SimQueries(deps),
      new SimImageService(deps),
      this.#info,
    ];
    bindRpcs(this as unknown as Record<string, unknown>, this.#calls, parts);
  }

  /** Every CRI method called, in order (including calls that failed). */
  get calls(): readonly CriMethodName[] {
    return this.#calls.log.calls;
  }

  /** Sandboxes by id (tests may read and change them). */
  get sandboxes(): Map<string, SimSandbox> {
    return this.#store.sandboxes;
  }

  /** Containers by id (tests may read and change them). */
  get containers(): Map<string, SimContainer> {
    return this.#store.containers;
  }

  /** The pod CIDR last set through `updateRuntimeConfig`. */
  get podCidr(): string {
    return this.#info.podCidr;
  }

  /** Makes the next call of `method` fail with `error` (errors queue up). */
  injectError(method: CriMethodName, error: Error): void {
    this.#calls.log.injectError(method, error);
  }

  /** The container's log as CRI-format lines joined by newlines. */
  readLog(containerId: string): string {
    return this.#store.readLog(containerId);
  }

  /** Marks the runtime closed; later calls fail with Unavailable. Idempotent. */
  close(): Promise<void> {
    this.#calls.close();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Puts each CRI method on `target`: the call goes through the gate `calls`
 * first, then to the handler of the part that implements it.
 */
function bindRpcs(
  target: Record<string, unknown>,
  calls: SimCalls,
  parts: readonly Partial<SimHandlers>[],
): void {
  void EVERY_RPC_HAS_A_PART;
  for (const rpc of RPCS) {
    const name = rpc.localName as CriMethodName;
    const part = parts.find((p) => name in p) as
      | Record<string, AnyHandler>
      | undefined;
    const handler = part?.[name]?.bind(part);
    if (!handler) {
      throw new TypeError(
        `Simulated runtime has no part for ${rpc.parent.typeName}.${rpc.name}`,
      );
    }
    target[name] = rpc.methodKind === "server_streaming"
      ? (request: unknown, options?: CallOptions) => {
        calls.enterSync(name, options);
        return handler(request, options);
      }
      : (request: unknown, options?: CallOptions) =>
        calls.enter(name, options).then(() => handler(request, options));
  }
}

type AnyHandler = (request: unknown, options?: CallOptions) => unknown;

/**
 * Builds a simulated runtime implementing both CRI services.
 *
 * @example
 * ```ts
 * import { createSimRuntime } from "./mod.ts";
 * const runtime = createSimRuntime({ scenario: { containers: { app: { exitAfterMs: 10, exitCode: 1 } } } });
 * const v = await runtime.version({ version: "0.1.0" });
 * console.assert(v.runtimeName === "kubelet.ts-sim");
 * ```
 */
export function createSimRuntime(options: SimRuntimeOptions = {}): SimRuntime {
  return new SimRuntime(options);
}
