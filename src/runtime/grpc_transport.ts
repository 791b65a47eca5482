/**
 * Minimal gRPC client transport over HTTP/2 on a unix socket, built on Deno
 * `fetch` with `Deno.createHttpClient({ proxy: { transport: "unix" } })`.
 * HTTP/2 is forced with prior knowledge (`http2: true, http1: false`; checked:
 * the client then opens with the `PRI * HTTP/2.0` preface).
 *
 * Status handling lives with a limitation: `fetch` never exposes HTTP
 * trailers. gRPC servers send a failed unary call as Trailers-Only (status in
 * the response headers, which we do see), and a successful one as headers +
 * one message + `grpc-status: 0` trailers (which we do not see). So:
 * `grpc-status` ≠ 0 in the headers is an error; otherwise a body holding
 * exactly one complete frame is success; anything else is an error. A status
 * sent after messages of a server stream is invisible; the stream just ends.
 *
 * @module
 */

import {
  create,
  type DescMessage,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import type { Logger } from "../log/mod.ts";
import { formatGoDuration } from "../util/go_duration.ts";
import {
  CanceledError,
  DeadlineExceededError,
  GrpcCode,
  RuntimeError,
  runtimeErrorFromCode,
  RuntimeUnavailableError,
} from "./errors.ts";
import {
  decodeGrpcMessage,
  DEFAULT_MAX_MESSAGE_BYTES,
  encodeFrame,
  formatGrpcTimeout,
  FrameDecoder,
  grpcCodeFromHttpStatus,
  parseCriEndpoint,
} from "./grpc_codec.ts";
import type { CallOptions } from "./types.ts";

/** Default per-call deadline: kubelet's `--runtime-request-timeout` (2m). */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** Default waits between attempts when the socket refuses or is missing. */
export const DEFAULT_CONNECT_RETRY_DELAYS_MS: readonly number[] = [
  20,
  50,
  100,
  200,
];

/** Options for {@link createGrpcTransport}. */
export interface GrpcTransportOptions {
  /** `unix:///path`, `unix:/path` or `/path`. */
  endpoint: string;
  /** Flag named when `endpoint` is invalid (default `--container-runtime-endpoint`). */
  flag?: string;
  /** Default deadline for unary calls in ms (default 2m). */
  timeoutMs?: number;
  /** Largest accepted response message (default 16 MiB). */
  maxMessageBytes?: number;
  /**
   * Waits before re-sending a call whose connection could not be opened
   * (socket missing or refusing). Only connect failures are retried: the
   * request never left, so retrying is safe for every RPC. `[]` disables it.
   */
  connectRetryDelaysMs?: readonly number[];
  logger?: Logger;
}

/** A gRPC channel to one unix socket. */
export interface GrpcTransport extends AsyncDisposable {
  /** Absolute path of the unix socket. */
  readonly socketPath: string;
  /** One request, one response. */
  unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    request: MessageInitShape<I>,
    options?: CallOptions,
  ): Promise<MessageShape<O>>;
  /** One request, a stream of responses (no deadline unless `timeoutMs` is given). */
  serverStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    request: MessageInitShape<I>,
    options?: CallOptions,
  ): AsyncIterable<MessageShape<O>>;
  /** Aborts in-flight calls (they reject with CanceledError) and closes the connection. */
  close(): Promise<void>;
}

/** Opens a lazy gRPC channel: nothing connects until the first call. */
export function createGrpcTransport(
  options: GrpcTransportOptions,
): GrpcTransport {
  const socketPath = parseCriEndpoint(
    options.endpoint,
    options.flag === undefined ? {} : { flag: options.flag },
  );
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
    throw new RangeError(
      `Invalid CRI request timeout ${timeoutMs} ms: must be a positive number (--runtime-request-timeout)`,
    );
  }
  return new FetchGrpcTransport(socketPath, { ...options, timeoutMs });
}

type Reason = "deadline" | "canceled" | "closed";

/** Abort plumbing for one call: caller signal + deadline + transport close. */
class CallScope {
  readonly controller = new AbortController();
  reason: Reason | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #cleanup: Array<() => void> = [];
  readonly #userSignal: AbortSignal | undefined;

  constructor(
    closeSignal: AbortSignal,
    userSignal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    this.#userSignal = userSignal;
    this.#link(closeSignal, "closed");
    if (userSignal) this.#link(userSignal, "canceled");
    if (timeoutMs !== undefined && !this.controller.signal.aborted) {
      this.#timer = setTimeout(() => this.#abort("deadline"), timeoutMs);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  #link(signal: AbortSignal, reason: Reason): void {
    if (signal.aborted) {
      this.#abort(reason);
      return;
    }
    const onAbort = () => this.#abort(reason);
    signal.addEventListener("abort", onAbort, { once: true });
    this.#cleanup.push(() => signal.removeEventListener("abort", onAbort));
  }

  #abort(reason: Reason): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller.abort(reason);
  }

  /** Converts whatever was thrown during the call into a RuntimeError. */
  translate(
    error: unknown,
    context: { method: string; socketPath: string; timeoutMs?: number },
  ): RuntimeError {
    const method = context.method;
    switch (this.reason) {
      case "deadline":
        return new DeadlineExceededError(
          `no response within ${
            formatGoDuration(context.timeoutMs ?? 0)
          } (context deadline exceeded)`,
          { method, cause: error },
        );
      case "canceled":
        return new CanceledError("the call was canceled by the caller", {
          method,
          cause: this.#userSignal?.reason ?? error,
        });
      case "closed":
        return new CanceledError("the CRI client was closed", {
          method,
          cause: error,
        });
    }
    if (error instanceof RuntimeError) return error;
    return new RuntimeUnavailableError(
      `cannot reach the container runtime at "${context.socketPath}": ${
        describeFetchError(error)
      }`,
      { method, cause: error },
    );
  }

  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const undo of this.#cleanup) undo();
    this.#cleanup = [];
  }
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const text = cause instanceof Error
    ? cause.message
    : error instanceof Error
    ? error.message
    : String(error);
  return text.replace(/^error sending request for url \([^)]*\): /, "");
}

/** True for failures to open the connection (nothing was sent). */
export function isConnectError(error: unknown): boolean {
  const text = describeFetchError(error);
  return /\(Connect\)|os error (2|111)\b/.test(text);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Error carried by the response headers, or undefined when they look healthy. */
export function statusFromHeaders(
  response: { status: number; headers: Headers },
  method: string,
): RuntimeError | undefined {
  const grpcStatus = response.headers.get("grpc-status");
  if (grpcStatus !== null) {
    const code = /^\d+$/.test(grpcStatus.trim())
      ? Number(grpcStatus)
      : GrpcCode.Unknown;
    if (code === GrpcCode.Ok) return undefined;
    const message = decodeGrpcMessage(
      response.headers.get("grpc-message") ?? "",
    );
    return runtimeErrorFromCode(code, message, { method });
  }
  if (response.status !== 200) {
    return runtimeErrorFromCode(
      grpcCodeFromHttpStatus(response.status),
      `unexpected HTTP status ${response.status} without grpc-status`,
      { method },
    );
  }
  const contentType = response.headers.get("content-type") ?? "";
  if (!contentType.startsWith("application/grpc")) {
    return new RuntimeError(
      GrpcCode.Unknown,
      `unexpected content-type "${contentType}": the endpoint is not a gRPC server`,
      { method },
    );
  }
  return undefined;
}

interface ResolvedOptions extends GrpcTransportOptions {
  timeoutMs: number;
}

class FetchGrpcTransport implements GrpcTransport {
  readonly socketPath: string;
  #client: Deno.HttpClient;
  #closer = new AbortController();
  #timeoutMs: number;
  #maxMessageBytes: number;
  #retryDelays: readonly number[];
  #logger: Logger | undefined;
  #url: string;

  constructor(socketPath: string, options: ResolvedOptions) {
    this.socketPath = socketPath;
    this.#timeoutMs = options.timeoutMs;
    this.#maxMessageBytes = options.maxMessageBytes ??
      DEFAULT_MAX_MESSAGE_BYTES;
    this.#retryDelays = options.connectRetryDelaysMs ??
      DEFAULT_CONNECT_RETRY_DELAYS_MS;
    this.#logger = options.logger;
    this.#url = "http://localhost";
    this.#client = Deno.createHttpClient({
      proxy: { transport: "unix", path: socketPath },
      http1: false,
      http2: true,
    });
  }

  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    request: MessageInitShape<I>,
    options: CallOptions = {},
  ): Promise<MessageShape<O>> {
    const path = `/${method.parent.typeName}/${method.name}`;
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const scope = new CallScope(
      this.#closer.signal,
      options.signal,
      timeoutMs,
    );
    try {
      const body = encodeFrame(
        toBinary(method.input, create(method.input, request)),
      );
      const response = await this.#post(path, body, scope, timeoutMs);
      const headerError = statusFromHeaders(response, path);
      if (headerError) {
        await response.body?.cancel().catch(() => {});
        throw headerError;
      }
      const bytes = new Uint8Array(await response.arrayBuffer());
      const decoder = new FrameDecoder({
        maxMessageBytes: this.#maxMessageBytes,
      });
      const frames = decoder.push(bytes);
      if (frames.length !== 1 || decoder.pendingBytes !== 0) {
        throw new RuntimeError(
          frames.length === 0 && decoder.pendingBytes === 0
            ? GrpcCode.Unknown
            : GrpcCode.Internal,
          frames.length === 0 && decoder.pendingBytes === 0
            ? "response carried no message and no grpc-status header (the status may be in trailers, which fetch cannot read)"
            : `malformed unary response: ${frames.length} message(s) and ${decoder.pendingBytes} stray byte(s)`,
          { method: path },
        );
      }
      return decodeMessage(method.output, frames[0]!, path);
    } catch (error) {
      throw scope.translate(error, {
        method: path,
        socketPath: this.socketPath,
        timeoutMs,
      });
    } finally {
      scope.dispose();
    }
  }

  async *serverStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    request: MessageInitShape<I>,
    options: CallOptions = {},
  ): AsyncGenerator<MessageShape<O>> {
    const path = `/${method.parent.typeName}/${method.name}`;
    const timeoutMs = options.timeoutMs;
    const scope = new CallScope(
      this.#closer.signal,
      options.signal,
      timeoutMs,
    );
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    let finished = false;
    try {
      const body = encodeFrame(
        toBinary(method.input, create(method.input, request)),
      );
      const response = await this.#post(path, body, scope, timeoutMs);
      const headerError = statusFromHeaders(response, path);
      if (headerError) throw headerError;
      if (!response.body) return;
      reader = response.body.getReader();
      const decoder = new FrameDecoder({
        maxMessageBytes: this.#maxMessageBytes,
      });
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const frame of decoder.push(value)) {
          yield decodeMessage(method.output, frame, path);
        }
      }
      finished = true;
      if (decoder.pendingBytes !== 0) {
        throw new RuntimeError(
          GrpcCode.Internal,
          `stream ended in the middle of a message (${decoder.pendingBytes} byte(s) left)`,
          { method: path },
        );
      }
    } catch (error) {
      throw scope.translate(error, {
        method: path,
        socketPath: this.socketPath,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    } finally {
      if (reader && !finished) await reader.cancel().catch(() => {});
      scope.dispose();
    }
  }

  async #post(
    path: string,
    body: Uint8Array<ArrayBuffer>,
    scope: CallScope,
    timeoutMs: number | undefined,
  ): Promise<Response> {
    const headers: Record<string, string> = {
      "content-type": "application/grpc",
      "te": "trailers",
      "user-agent": "kubelet.ts-grpc-fetch/0.1",
    };
    if (timeoutMs !== undefined) {
      headers["grpc-timeout"] = formatGrpcTimeout(timeoutMs);
    }
    for (let attempt = 0;; attempt++) {
      try {
        return await fetch(this.#url + path, {
          client: this.#client,
          method: "POST",
          headers,
          body,
          signal: scope.signal,
        });
      } catch (error) {
        const delay = this.#retryDelays[attempt];
        if (scope.signal.aborted || delay === undefined) throw error;
        if (!isConnectError(error)) throw error;
        const verbose = this.#logger?.v(4);
        if (verbose?.enabled) {
          verbose.info("Retrying CRI call after connect error", {
            method: path,
            attempt: attempt + 1,
            err: describeFetchError(error),
          });
        }
        await sleep(delay, scope.signal);
      }
    }
  }

  close(): Promise<void> {
    if (!this.#closer.signal.aborted) {
      this.#closer.abort("closed");
      this.#client.close();
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function decodeMessage<O extends DescMessage>(
  schema: O,
  bytes: Uint8Array,
  method: string,
): MessageShape<O> {
  try {
    return fromBinary(schema, bytes);
  } catch (error) {
    throw new RuntimeError(
      GrpcCode.Internal,
      `cannot decode ${schema.typeName}: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { method, cause: error },
    );
  }
}
