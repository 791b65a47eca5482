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
  unaryMessage,
} from "./grpc_codec.ts";
import type { CallOptions } from "./types.ts";
import { InflightCalls } from "./_inflight_calls.ts";
import {
  type CallScope,
  CRI_URL_HOST,
  describeFetchError,
  isConnectError,
  permissionError,
  sleep,
} from "./_grpc_call.ts";
import { errorMessage } from "../util/error_message.ts";
import {
  decodesWithoutViews,
  freshBody,
  KeptBuffer,
  readChunks,
} from "./_response_body.ts";

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
  #calls = new InflightCalls();
  #kept = new KeptBuffer();
  #headers = new Map<number | undefined, Record<string, string>>();
  #timeoutMs: number;
  #maxMessageBytes: number;
  #retryDelays: readonly number[];
  #logger: Logger | undefined;
  #flag: string;

  constructor(socketPath: string, options: ResolvedOptions) {
    this.socketPath = socketPath;
    this.#timeoutMs = options.timeoutMs;
    this.#maxMessageBytes = options.maxMessageBytes ??
      DEFAULT_MAX_MESSAGE_BYTES;
    this.#retryDelays = options.connectRetryDelaysMs ??
      DEFAULT_CONNECT_RETRY_DELAYS_MS;
    this.#logger = options.logger;
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

  // The hot path is kept flat on purpose (one async frame, no awaited
  // helpers, retries only after a failed fetch): each await and wrapper shows
  // up in the round-trip latency the CRI bench compares with grpc-js.
  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    request: MessageInitShape<I>,
    options?: CallOptions,
  ): Promise<MessageShape<O>> {
    const target = methodTarget(method);
    const path = target.path;
    const timeoutMs = options?.timeoutMs ?? this.#timeoutMs;
    const scope = this.#calls.open(options?.signal, timeoutMs);
    try {
      const init = this.#init(method.input, request, scope, timeoutMs);
      let response: Response;
      try {
        response = await fetch(target.url, init);
      } catch (error) {
        response = await this.#retry(target, init, scope, error);
      }
      const headerError = statusFromHeaders(response, path);
      if (headerError) {
        await response.body?.cancel().catch(() => {});
        throw headerError;
      }
      const body = await readChunks(response.body);
      // From here to the decoded message nothing awaits: the kept buffer is ours.
      const kept = this.#kept.takes(body) &&
        decodesWithoutViews(method.output);
      const message = unaryMessage(
        kept ? this.#kept.gather(body) : freshBody(body),
        { maxMessageBytes: this.#maxMessageBytes, method: path },
      );
      return decodeMessage(method.output, message, path, kept);
    } catch (error) {
      throw scope.translate(error, {
        method: path,
        socketPath: this.socketPath,
        flag: this.#flag,
        timeoutMs,
      });
    } finally {
      this.#calls.release(scope);
    }
  }

  async *serverStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    request: MessageInitShape<I>,
    options: CallOptions = {},
  ): AsyncGenerator<MessageShape<O>> {
    const target = methodTarget(method);
    const path = target.path;
    const timeoutMs = options.timeoutMs;
    const scope = this.#calls.open(options.signal, timeoutMs);
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    let finished = false;
    try {
      const init = this.#init(method.input, request, scope, timeoutMs);
      let response: Response;
      try {
        response = await fetch(target.url, init);
      } catch (error) {
        response = await this.#retry(target, init, scope, error);
      }
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
      this.#calls.release(scope);
    }
  }

  /** The fetch options of one call; the request is encoded here, per call. */
  #init<I extends DescMessage>(
    schema: I,
    request: MessageInitShape<I>,
    scope: CallScope,
    timeoutMs: number | undefined,
  ): FetchInit {
    return {
      client: this.#client,
      method: "POST",
      headers: this.#headersFor(timeoutMs),
      body: encodeFrame(toBinary(schema, create(schema, request))),
      signal: scope.signal,
    };
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

  /**
   * Re-sends a request whose first attempt threw `error`, while the failure
   * is a connect error (nothing was sent) and retry delays remain; rethrows
   * anything else. Off the hot path: only reached after a failed fetch.
   */
  async #retry(
    target: MethodTarget,
    init: FetchInit,
    scope: CallScope,
    error: unknown,
  ): Promise<Response> {
    for (let attempt = 0;; attempt++) {
      const delay = this.#retryDelays[attempt];
      if (scope.signal.aborted || delay === undefined) throw error;
      if (!isConnectError(error)) throw error;
      const verbose = this.#logger?.v(4);
      if (verbose?.enabled) {
        verbose.info("Retrying CRI call after connect error", {
          method: target.path,
          attempt: attempt + 1,
          err: describeFetchError(error),
        });
      }
      await sleep(delay, scope.signal);
      try {
        return await fetch(target.url, init);
      } catch (next) {
        error = next;
      }
    }
  }

  close(): Promise<void> {
    if (!this.#calls.closed) {
      this.#calls.close();
      this.#client.close();
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** What {@linkcode fetch} gets for one call; reused as is by retries. */
type FetchInit = RequestInit & { client: Deno.HttpClient };

/** Path for errors and logs, URL for fetch. */
interface MethodTarget {
  readonly path: string;
  readonly url: string;
}

const METHOD_TARGETS = new WeakMap<object, MethodTarget>();

/**
 * `/package.Service/Method` and its URL, built once per method descriptor so
 * every call hands fetch the same ready string instead of a fresh one.
 */
function methodTarget(
  method: { name: string; parent: { typeName: string } },
): MethodTarget {
  let target = METHOD_TARGETS.get(method);
  if (target === undefined) {
    const path = `/${method.parent.typeName}/${method.name}`;
    target = { path, url: `http://${CRI_URL_HOST}${path}` };
    METHOD_TARGETS.set(method, target);
  }
  return target;
}

function decodeMessage<O extends DescMessage>(
  schema: O,
  bytes: Uint8Array,
  method: string,
  reusedInput = false,
): MessageShape<O> {
  try {
    // unknown fields are kept as views of the input, which a reused buffer overwrites
    return fromBinary(schema, bytes, { readUnknownFields: !reusedInput });
  } catch (error) {
    throw new RuntimeError(
      GrpcCode.Internal,
      `cannot decode ${schema.typeName}: ${errorMessage(error)}`,
      { method, cause: error },
    );
  }
}
