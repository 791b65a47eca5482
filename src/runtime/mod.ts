/**
 * CRI runtime area: the `RuntimeService`/`ImageService` seam, typed errors,
 * the gRPC client for real runtimes, and every generated CRI v1 message,
 * enum and schema. Other folders import only from here, never from `gen/`.
 *
 * Build a message with `create(XSchema, init)`; requests may also be passed
 * as plain objects (`{ podSandboxId: "abc" }`).
 *
 * @module
 */

export type {
  CallOptions,
  CriMethodName,
  CriRequest,
  CriResponse,
  CriRuntime,
  ExecSyncRequestInit,
  ImageService,
  PullImageRequestInit,
  RpcMethod,
  RuntimeService,
  ServiceClient,
} from "./types.ts";

export {
  AlreadyExistsError,
  CanceledError,
  DeadlineExceededError,
  GrpcCode,
  grpcCodeName,
  isAlreadyExists,
  isCanceled,
  isDeadlineExceeded,
  isNotFound,
  isUnavailable,
  isUnimplemented,
  NotFoundError,
  RuntimeError,
  runtimeErrorFromCode,
  RuntimeUnavailableError,
  UnimplementedError,
} from "./errors.ts";
export type { RuntimeErrorOptions } from "./errors.ts";

export { createCriRuntime } from "./cri_client.ts";
export type { CriRuntimeOptions } from "./cri_client.ts";
export {
  checkVersion,
  connectRuntime,
  handshake,
  KUBE_RUNTIME_API_VERSION,
  NETWORK_READY,
  RUNTIME_READY,
  runtimeReadiness,
  validateRuntimeConnection,
} from "./connect_runtime.ts";
export type {
  ConnectedRuntime,
  ConnectRuntimeOptions,
  HandshakeOptions,
  HandshakeResult,
  RuntimeReadiness,
} from "./connect_runtime.ts";
export {
  createGrpcTransport,
  CRI_URL_HOST,
  criNetPermissions,
  DEFAULT_TIMEOUT_MS,
} from "./grpc_transport.ts";
export type { GrpcTransport, GrpcTransportOptions } from "./grpc_transport.ts";
export { encodeFrame, FrameDecoder, parseCriEndpoint } from "./grpc_codec.ts";

export {
  clone,
  create,
  equals,
  fromBinary,
  toBinary,
} from "@bufbuild/protobuf";
export type { MessageInitShape } from "@bufbuild/protobuf";

/**
 * Every generated CRI v1 message type, its `XxxSchema` and every enum, as
 * `protoc-gen-es` wrote them: the surface follows `proto/api.proto`. The two
 * service descriptors are the exception: the names `RuntimeService` and
 * `ImageService` belong to the client interfaces above (an explicit export
 * wins over `export *`), so the descriptors are exported as
 * `RuntimeServiceDesc` and `ImageServiceDesc`.
 */
export * from "./gen/api_pb.ts";
export {
  ImageService as ImageServiceDesc,
  RuntimeService as RuntimeServiceDesc,
} from "./gen/api_pb.ts";
