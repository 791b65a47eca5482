/**
 * Test doubles of the runtime area; tests import them from here only
 * (scripts/check_imports.ts enforces it).
 *
 * - {@linkcode FakeRuntime}: a recording fake of both CRI services with no
 *   runtime behind it. Every call is logged with its request and options;
 *   tests queue errors per method and script replies. Unscripted calls answer
 *   an empty response, except `version` and `status`, which describe a ready
 *   CRI v1 runtime (as cri-api's `FakeRuntimeService` does).
 * - `createSimRuntime`: the simulated runtime, for tests that need real CRI
 *   state (sandboxes, containers, images that persist between calls).
 *
 * @module
 */

import {
  create,
  type DescMessage,
  type DescMethod,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { CallLog } from "./_call_log.ts";
import { CanceledError, RuntimeUnavailableError } from "./errors.ts";
import {
  ImageService as ImageServiceDesc,
  RuntimeService as RuntimeServiceDesc,
} from "./gen/api_pb.ts";
import type {
  CallOptions,
  CriMethodName,
  CriRequest,
  CriResponseInit,
  CriRuntime,
} from "./types.ts";

export { createSimRuntime, SimRuntime } from "./sim/mod.ts";
export type { SimRuntimeOptions, SimScenario } from "./sim/mod.ts";

/** One call as {@linkcode FakeRuntime} saw it. */
export interface FakeCall {
  method: CriMethodName;
  request: unknown;
  options: CallOptions | undefined;
}

/** A scripted reply: the response for one request (or a stream's responses). */
export type FakeReply<K extends CriMethodName> = (
  request: CriRequest<K>,
) =>
  | CriResponseInit<K>
  | Iterable<CriResponseInit<K>>
  | Promise<CriResponseInit<K>>;

/** Name of the runtime {@linkcode FakeRuntime} reports in `version`. */
export const FAKE_RUNTIME_NAME = "fake-runtime";

const DEFAULT_REPLIES: Partial<Record<CriMethodName, () => object>> = {
  version: () => ({
    version: "0.1.0",
    runtimeName: FAKE_RUNTIME_NAME,
    runtimeVersion: "0.1.0",
    runtimeApiVersion: "v1",
  }),
  status: () => ({
    status: {
      conditions: [
        { type: "RuntimeReady", status: true },
        { type: "NetworkReady", status: true },
      ],
    },
  }),
};

/** Every RPC of both services: the methods a {@linkcode FakeRuntime} has. */
const RPCS: readonly DescMethod[] = [
  ...RuntimeServiceDesc.methods,
  ...ImageServiceDesc.methods,
];

/** The CRI methods, built per instance from the service descriptors. */
export interface FakeRuntime extends CriRuntime {}

/**
 * A recording fake of both CRI services; see the module comment.
 *
 * @example
 * ```ts
 * import { FakeRuntime } from "./testing.ts";
 * const runtime = new FakeRuntime();
 * runtime.respond("containerStatus", () => ({ status: { id: "c1" } }));
 * const { status } = await runtime.containerStatus({ containerId: "c1" });
 * console.assert(status?.id === "c1" && runtime.calls[0] === "containerStatus");
 * ```
 */
export class FakeRuntime {
  /** Every call with its request and options, in order. */
  readonly requests: FakeCall[] = [];
  /** True once `close()` was called; later calls fail with Unavailable. */
  closed = false;
  readonly #log = new CallLog();
  readonly #replies = new Map<CriMethodName, (request: never) => unknown>();

  constructor() {
    const methods = this as unknown as Record<string, unknown>;
    for (const rpc of RPCS) {
      const name = rpc.localName as CriMethodName;
      methods[name] = rpc.methodKind === "server_streaming"
        ? (request: unknown, options?: CallOptions) =>
          this.#stream(name, rpc.output, request, options)
        : (request: unknown, options?: CallOptions) =>
          this.#unary(name, rpc.output, request, options);
    }
  }

  /** Every CRI method called, in order (including calls that failed). */
  get calls(): readonly CriMethodName[] {
    return this.#log.calls;
  }

  /** Makes the next call of `method` fail with `error` (errors queue up). */
  injectError(method: CriMethodName, error: Error): void {
    this.#log.injectError(method, error);
  }

  /**
   * Scripts the replies of `method` from now on. A streaming method's reply
   * returns the stream's responses (an array or other iterable).
   */
  respond<K extends CriMethodName>(method: K, reply: FakeReply<K>): void {
    this.#replies.set(method, reply as (request: never) => unknown);
  }

  /** The requests `method` was called with, in order. */
  requestsOf<K extends CriMethodName>(method: K): CriRequest<K>[] {
    return this.requests.filter((c) => c.method === method).map((c) =>
      c.request as CriRequest<K>
    );
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Logs the call, then throws a queued error, a cancel or a closed error. */
  #enter(
    method: CriMethodName,
    request: unknown,
    options: CallOptions | undefined,
  ): void {
    this.#log.record(method);
    this.requests.push({ method, request, options });
    if (this.closed) {
      throw new RuntimeUnavailableError("fake runtime is closed");
    }
    if (options?.signal?.aborted) {
      throw new CanceledError("context canceled", {
        cause: options.signal.reason,
      });
    }
    const error = this.#log.nextError(method);
    if (error) throw error;
  }

  #reply(method: CriMethodName, request: unknown): unknown {
    const reply = this.#replies.get(method);
    if (reply) return reply(request as never);
    return DEFAULT_REPLIES[method]?.();
  }

  async #unary(
    method: CriMethodName,
    output: DescMessage,
    request: unknown,
    options: CallOptions | undefined,
  ): Promise<unknown> {
    this.#enter(method, request, options);
    const init = await this.#reply(method, request);
    return create(output, init as MessageInitShape<DescMessage>);
  }

  async *#stream(
    method: CriMethodName,
    output: DescMessage,
    request: unknown,
    options: CallOptions | undefined,
  ): AsyncGenerator<unknown> {
    this.#enter(method, request, options);
    const items = this.#reply(method, request) as
      | Iterable<MessageInitShape<DescMessage>>
      | undefined;
    for (const init of items ?? []) yield create(output, init);
  }
}
