/**
 * CRI client for real runtimes (containerd, CRI-O): implements
 * `RuntimeService` and `ImageService` over {@link createGrpcTransport}.
 * Each method is one gRPC call; errors are typed `RuntimeError`s. The methods
 * are not written out: they are built from the generated service descriptors,
 * one per RPC, so the client always matches `gen/api_pb.ts`.
 *
 * @module
 */

import type {
  DescMessage,
  DescMethodServerStreaming,
  DescMethodUnary,
  DescService,
  MessageInitShape,
} from "@bufbuild/protobuf";
import type { Logger } from "../log/mod.ts";
import {
  ImageService as ImageServiceDesc,
  RuntimeService as RuntimeServiceDesc,
} from "./gen/api_pb.ts";
import { createGrpcTransport, type GrpcTransport } from "./grpc_transport.ts";
import type { CallOptions, CriRuntime, ServiceClient } from "./types.ts";
import {
  operationType,
  runtimeOperations,
  runtimeOperationsDuration,
  runtimeOperationsErrors,
} from "../metrics/mod.ts";
import type { CounterChild, HistogramChild } from "../metrics/mod.ts";

/** Options for {@link createCriRuntime}. */
export interface CriRuntimeOptions {
  /** `--container-runtime-endpoint`: `unix:///path`, `unix:/path` or `/path`. */
  endpoint: string;
  /** `--image-service-endpoint`; defaults to `endpoint`. */
  imageEndpoint?: string;
  /** Default per-call deadline in ms (`--runtime-request-timeout`, default 2m). */
  timeoutMs?: number;
  /** Waits between re-sends when the socket is missing or refusing (default 20, 50, 100, 200 ms). */
  connectRetryDelaysMs?: readonly number[];
  logger?: Logger;
}

/**
 * Creates a lazy CRI client; no connection is made until the first call.
 * Throws a TypeError naming `--container-runtime-endpoint` or
 * `--image-service-endpoint` for an endpoint that is not a unix socket.
 */
export function createCriRuntime(options: CriRuntimeOptions): CriRuntime {
  const common = {
    ...(options.timeoutMs === undefined
      ? {}
      : { timeoutMs: options.timeoutMs }),
    ...(options.connectRetryDelaysMs === undefined
      ? {}
      : { connectRetryDelaysMs: options.connectRetryDelaysMs }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  };
  const runtime = createGrpcTransport({
    endpoint: options.endpoint,
    flag: "--container-runtime-endpoint",
    ...common,
  });
  const imageEndpoint = options.imageEndpoint?.trim();
  if (!imageEndpoint) return criClient(runtime, runtime);
  let images: GrpcTransport;
  try {
    images = createGrpcTransport({
      endpoint: imageEndpoint,
      flag: "--image-service-endpoint",
      ...common,
    });
  } catch (error) {
    void runtime.close();
    throw error;
  }
  if (images.socketPath === runtime.socketPath) {
    void images.close();
    images = runtime;
  }
  return criClient(runtime, images);
}

/** gRPC-backed {@link CriRuntime}: each service's RPCs on its own channel. */
function criClient(runtime: GrpcTransport, images: GrpcTransport): CriRuntime {
  const close = async () => {
    await runtime.close();
    if (images !== runtime) await images.close();
  };
  return {
    ...serviceClient(RuntimeServiceDesc, runtime),
    ...serviceClient(ImageServiceDesc, images),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * One method per RPC of `service`, each a single call on `transport`.
 * @throws TypeError for a client- or bidi-streaming RPC (CRI v1 has none)
 */
function serviceClient<S extends DescService>(
  service: S,
  transport: GrpcTransport,
): ServiceClient<S> {
  type Init = MessageInitShape<DescMessage>;
  const client: Record<string, unknown> = {};
  for (const method of service.methods) {
    switch (method.methodKind) {
      case "unary": {
        const rpc = method as DescMethodUnary;
        // Series bound on a method's first call (only used methods are
        // exported, as upstream); later calls only add to them.
        const op = operationType(method.localName);
        let total: CounterChild | undefined;
        let errors: CounterChild | undefined;
        let duration: HistogramChild | undefined;
        client[method.localName] = async (
          request: Init,
          options?: CallOptions,
        ) => {
          const started = performance.now();
          (total ??= runtimeOperations.labels(op)).inc();
          errors ??= runtimeOperationsErrors.labels(op);
          duration ??= runtimeOperationsDuration.labels(op);
          try {
            return await transport.unary(rpc, request, options);
          } catch (error) {
            errors.inc();
            throw error;
          } finally {
            duration.observe((performance.now() - started) / 1000);
          }
        };
        break;
      }
      case "server_streaming": {
        const rpc = method as DescMethodServerStreaming;
        client[method.localName] = (request: Init, options?: CallOptions) =>
          transport.serverStream(rpc, request, options);
        break;
      }
      default:
        throw new TypeError(
          `Cannot build a client for ${method.parent.typeName}.${method.name}: ${method.methodKind} RPCs are not supported`,
        );
    }
  }
  return client as ServiceClient<S>;
}
