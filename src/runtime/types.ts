/**
 * The CRI seam, derived from the generated service descriptors in
 * `gen/api_pb.ts` rather than written out: `RuntimeService` and
 * `ImageService` have one method per RPC of `runtime.v1` (named by the RPC's
 * camelCase `localName`), taking the request's plain-object init shape (every
 * field optional, nested messages as plain objects) and resolving to the
 * generated response message. A server-streaming RPC returns an
 * `AsyncIterable` of responses instead. Regenerating `api_pb.ts` from a newer
 * `api.proto` (`scripts/gen_cri.sh`) changes these types with it.
 *
 * Implementations: the gRPC client (`createCriRuntime`), the simulated runtime
 * (`src/runtime/sim/`) and the recording fake (`testing.ts`). Failures reject
 * with `RuntimeError` (see `errors.ts`).
 *
 * @module
 */

import type {
  DescMessage,
  MessageInitShape,
  MessageShape,
} from "@bufbuild/protobuf";
import type {
  ImageService as ImageServiceDesc,
  RuntimeService as RuntimeServiceDesc,
} from "./gen/api_pb.ts";

/** Per-call options accepted by every runtime method. */
export interface CallOptions {
  /** Aborts the call; the promise rejects with a `CanceledError`. */
  signal?: AbortSignal;
  /**
   * Deadline for this call in milliseconds, overriding the client default
   * (`--runtime-request-timeout`, 2m). Expiry rejects with
   * `DeadlineExceededError`.
   */
  timeoutMs?: number;
}

/**
 * The client method for one RPC descriptor: unary RPCs resolve to one
 * response, server-streaming ones yield responses until the stream ends or
 * the signal aborts. CRI v1 has no client-streaming or bidirectional RPCs.
 */
export type RpcMethod<M> = M extends {
  methodKind: "unary";
  input: infer I extends DescMessage;
  output: infer O extends DescMessage;
} ? (
    request: MessageInitShape<I>,
    options?: CallOptions,
  ) => Promise<MessageShape<O>>
  : M extends {
    methodKind: "server_streaming";
    input: infer I extends DescMessage;
    output: infer O extends DescMessage;
  } ? (
      request: MessageInitShape<I>,
      options?: CallOptions,
    ) => AsyncIterable<MessageShape<O>>
  : never;

/** A client of a generated service: one {@linkcode RpcMethod} per RPC. */
export type ServiceClient<S extends { method: object }> = {
  [K in keyof S["method"]]: RpcMethod<S["method"][K]>;
};

/** CRI `runtime.v1.RuntimeService`, one method per RPC. */
export type RuntimeService = ServiceClient<typeof RuntimeServiceDesc>;

/** CRI `runtime.v1.ImageService`, one method per RPC. */
export type ImageService = ServiceClient<typeof ImageServiceDesc>;

/** Every RPC of both CRI services by method name. */
type CriRpcs =
  & (typeof RuntimeServiceDesc)["method"]
  & (typeof ImageServiceDesc)["method"];

/** Name of any method of either service (`"version"`, `"pullImage"`, …). */
export type CriMethodName = keyof RuntimeService | keyof ImageService;

/** The request init shape of a CRI method, e.g. `CriRequest<"pullImage">`. */
export type CriRequest<K extends CriMethodName> = MessageInitShape<
  CriRpcs[K]["input"]
>;

/** The response message of a CRI method, e.g. `CriResponse<"version">`. */
export type CriResponse<K extends CriMethodName> = MessageShape<
  CriRpcs[K]["output"]
>;

/** The init shape of a CRI method's response, as fakes build it. */
export type CriResponseInit<K extends CriMethodName> = MessageInitShape<
  CriRpcs[K]["output"]
>;

/** Plain-object init shape of `PullImageRequest`. */
export type PullImageRequestInit = CriRequest<"pullImage">;
/** Plain-object init shape of `ExecSyncRequest`. */
export type ExecSyncRequestInit = CriRequest<"execSync">;

/** Both CRI services plus resource cleanup, as returned by `createCriRuntime`. */
export interface CriRuntime
  extends RuntimeService, ImageService, AsyncDisposable {
  /** Closes the HTTP/2 connection(s); pending calls reject with `CanceledError`. */
  close(): Promise<void>;
}
