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
import { GrpcCode, RuntimeError } from "./errors.ts";
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  encodeFrame,
  formatGrpcTimeout,
  FrameDecoder,
  parseCriEndpoint,
  statusFromHeaders,
} from "./grpc_codec.ts";
import type { CallOptions } from "./types.ts";
import {
  CallScope,
  CRI_URL_HOST,
  describeFetchError,
  isConnectError,
  permissionError,
  sleep,
} from "./_grpc_call.ts";

export { CRI_URL_HOST, isConnectError };

/**
 * Every `--allow-net` entry a CRI client for `endpoint` needs (it also needs
 * `--allow-read` and `--allow-write` on the socket path).
 */
export function criNetPermissions(
  endpoint: string,
  options: { flag?: string } = {},
): string[] {
  const socketPath = parseCriEndpoint(
    endpoint,
    options.flag === undefined ? {} : { flag: options.flag },
  );
  return [`unix:${socketPath}`, `${CRI_URL_HOST}:80`];
}

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

interface ResolvedOptions extends GrpcTransportOptions {
  timeoutMs: number;
}

class FetchGrpcTransport implements GrpcTransport {
  readonly socketPath: string;
  #client: Deno.HttpClient;
  #closed = false;
  #inflight = new Set<CallScope>();
  #headers = new Map<number | undefined, Record<string, string>>();
  #timeoutMs: number;
  #maxMessageBytes: number;
  #retryDelays: readonly number[];
  #logger: Logger | undefined;
  #url: string;
  #flag: string;

  constructor(socketPath: string, options: ResolvedOptions) {
    this.socketPath = socketPath;
    this.#timeoutMs = options.timeoutMs;
    this.#maxMessageBytes = options.maxMessageBytes ??
      DEFAULT_MAX_MESSAGE_BYTES;
    this.#retryDelays = options.connectRetryDelaysMs ??
      DEFAULT_CONNECT_RETRY_DELAYS_MS;
    this.#logger = options.logger;
    this.#url = `http://${CRI_URL_HOST}`;
    this.#flag = options.flag ?? "--container-runtime-endpoint";
    try {
      this.#client = Deno.createHttpClient({
        proxy: { transport: "unix", path: socketPath },
        http1: false,
        http2: true,
      });
    } catch (error) {
      throw permissionError(error, socketPath, options.flag) ?? error;
    }
  }

  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    request: MessageInitShape<I>,
    options: CallOptions = {},
  ): Promise<MessageShape<O>> {
    const path = methodPath(method);
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const scope = this.#open(options.signal, timeoutMs);
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
        flag: this.#flag,
        timeoutMs,
      });
    } finally {
      this.#release(scope);
    }
  }

  async *serverStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    request: MessageInitShape<I>,
    options: CallOptions = {},
  ): AsyncGenerator<MessageShape<O>> {
    const path = methodPath(method);
    const timeoutMs = options.timeoutMs;
    const scope = this.#open(options.signal, timeoutMs);
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
        flag: this.#flag,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    } finally {
      if (reader && !finished) await reader.cancel().catch(() => {});
      this.#release(scope);
    }
  }

  #open(
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ): CallScope {
    const scope = new CallScope(signal, timeoutMs);
    if (this.#closed) scope.close();
    else this.#inflight.add(scope);
    return scope;
  }

  #release(scope: CallScope): void {
    this.#inflight.delete(scope);
    scope.dispose();
  }

  /** Request headers, built once per distinct deadline. */
  #headersFor(timeoutMs: number | undefined): Record<string, string> {
    let headers = this.#headers.get(timeoutMs);
    if (!headers) {
      headers = {
        "content-type": "application/grpc",
        "te": "trailers",
        "user-agent": "kubelet.ts-grpc-fetch/0.1",
      };
      if (timeoutMs !== undefined) {
        headers["grpc-timeout"] = formatGrpcTimeout(timeoutMs);
      }
      if (this.#headers.size < 64) this.#headers.set(timeoutMs, headers);
    }
    return headers;
  }

  async #post(
    path: string,
    body: Uint8Array<ArrayBuffer>,
    scope: CallScope,
    timeoutMs: number | undefined,
  ): Promise<Response> {
    const headers = this.#headersFor(timeoutMs);
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
    if (!this.#closed) {
      this.#closed = true;
      for (const scope of this.#inflight) scope.close();
      this.#inflight.clear();
      this.#client.close();
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

const METHOD_PATHS = new WeakMap<object, string>();

/** `/package.Service/Method`, computed once per method descriptor. */
function methodPath(
  method: { name: string; parent: { typeName: string } },
): string {
  let path = METHOD_PATHS.get(method);
  if (path === undefined) {
    path = `/${method.parent.typeName}/${method.name}`;
    METHOD_PATHS.set(method, path);
  }
  return path;
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
