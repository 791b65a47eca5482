/**
 * Pure pieces of the gRPC-over-HTTP/2 wire format used by the CRI client:
 * length-prefixed message frames, the `grpc-timeout` header, `grpc-message`
 * percent-decoding, HTTP-status fallback mapping, and CRI endpoint parsing.
 * No I/O here, so everything is unit-testable without a socket.
 *
 * @module
 */

import { GrpcCode, RuntimeError, runtimeErrorFromCode } from "./errors.ts";

/** Bytes in a frame header: 1 compressed-flag byte + 4 length bytes (big-endian). */
export const FRAME_HEADER_BYTES = 5;

/** Default maximum message size, same as kubelet's CRI client (16 MiB). */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Wraps one serialized protobuf message into an uncompressed gRPC frame. */
export function encodeFrame(message: Uint8Array): Uint8Array<ArrayBuffer> {
  const frame = new Uint8Array(FRAME_HEADER_BYTES + message.length);
  new DataView(frame.buffer).setUint32(1, message.length, false);
  frame.set(message, FRAME_HEADER_BYTES);
  return frame;
}

/** Options for {@link FrameDecoder}. */
export interface FrameDecoderOptions {
  /** Reject frames whose declared length exceeds this (default 16 MiB). */
  maxMessageBytes?: number;
}

/**
 * Incremental frame parser: feed it body chunks as they arrive, collect the
 * complete messages it returns. Bytes of a partial frame are kept until the
 * rest arrives; {@link FrameDecoder.pendingBytes} tells whether the body
 * ended mid-frame.
 */
export class FrameDecoder {
  #buffer: Uint8Array = new Uint8Array(0);
  #maxMessageBytes: number;

  constructor(options: FrameDecoderOptions = {}) {
    this.#maxMessageBytes = options.maxMessageBytes ??
      DEFAULT_MAX_MESSAGE_BYTES;
  }

  /** Number of buffered bytes that do not yet form a complete frame. */
  get pendingBytes(): number {
    return this.#buffer.length;
  }

  /**
   * Appends `chunk` and returns every message completed by it, in order.
   * Throws a {@link RuntimeError} (ResourceExhausted) for an oversized frame
   * and (Internal) for a compressed one: we never advertise an encoding, so a
   * compressed frame is a protocol violation.
   */
  push(chunk: Uint8Array): Uint8Array[] {
    let buffer = chunk;
    if (this.#buffer.length > 0) {
      buffer = new Uint8Array(this.#buffer.length + chunk.length);
      buffer.set(this.#buffer, 0);
      buffer.set(chunk, this.#buffer.length);
    }
    const messages: Uint8Array[] = [];
    let offset = 0;
    while (buffer.length - offset >= FRAME_HEADER_BYTES) {
      const view = new DataView(
        buffer.buffer,
        buffer.byteOffset + offset,
        FRAME_HEADER_BYTES,
      );
      const flag = view.getUint8(0);
      const length = view.getUint32(1, false);
      if (flag !== 0) {
        throw new RuntimeError(
          GrpcCode.Internal,
          `received a compressed message (flag ${flag}) but no compression was negotiated`,
        );
      }
      if (length > this.#maxMessageBytes) {
        throw new RuntimeError(
          GrpcCode.ResourceExhausted,
          `received message larger than max (${length} vs. ${this.#maxMessageBytes})`,
        );
      }
      const end = offset + FRAME_HEADER_BYTES + length;
      if (end > buffer.length) break;
      messages.push(buffer.slice(offset + FRAME_HEADER_BYTES, end));
      offset = end;
    }
    this.#buffer = offset === buffer.length
      ? new Uint8Array(0)
      : buffer.slice(offset);
    return messages;
  }
}

/** Options for {@link unaryMessage}. */
export interface UnaryMessageOptions {
  /** Reject a message longer than this (default 16 MiB). */
  maxMessageBytes?: number;
  /** gRPC method path named in errors. */
  method?: string;
}

/**
 * The one message of a complete unary response body (without its frame
 * header; a view, not a copy). Throws a {@link RuntimeError}: Unknown for an
 * empty body (a status we cannot see may be in trailers), ResourceExhausted
 * for an oversized message, Internal for a compressed frame, several
 * messages or stray bytes.
 */
export function unaryMessage(
  body: Uint8Array,
  options: UnaryMessageOptions = {},
): Uint8Array {
  const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  // fast path, the normal answer: exactly one uncompressed frame
  if (body.length >= FRAME_HEADER_BYTES && body[0] === 0) {
    const length = ((body[1]! << 24) | (body[2]! << 16) | (body[3]! << 8) |
      body[4]!) >>> 0;
    if (length === body.length - FRAME_HEADER_BYTES && length <= max) {
      return body.subarray(FRAME_HEADER_BYTES);
    }
  }
  const decoder = new FrameDecoder({ maxMessageBytes: max });
  const frames = decoder.push(body);
  if (frames.length === 1 && decoder.pendingBytes === 0) return frames[0]!;
  const method = options.method === undefined ? {} : {
    method: options.method,
  };
  if (frames.length === 0 && decoder.pendingBytes === 0) {
    throw new RuntimeError(
      GrpcCode.Unknown,
      "response carried no message and no grpc-status header (the status may be in trailers, which fetch cannot read)",
      method,
    );
  }
  throw new RuntimeError(
    GrpcCode.Internal,
    `malformed unary response: ${frames.length} message(s) and ${decoder.pendingBytes} stray byte(s)`,
    method,
  );
}

const TIMEOUT_UNITS: ReadonlyArray<readonly [string, number]> = [
  ["n", 1e6],
  ["u", 1e3],
  ["m", 1],
  ["S", 1e-3],
  ["M", 1e-3 / 60],
  ["H", 1e-3 / 3600],
];

/**
 * Formats a deadline for the `grpc-timeout` header: at most 8 digits plus a
 * unit (`n u m S M H`), choosing the finest unit that fits and rounding up
 * so the server never sees a shorter deadline than ours.
 */
export function formatGrpcTimeout(timeoutMs: number): string {
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw new RangeError(
      `Invalid gRPC timeout: ${timeoutMs} ms: must be a finite number >= 0`,
    );
  }
  for (const [unit, perMs] of TIMEOUT_UNITS) {
    const value = Math.ceil(timeoutMs * perMs);
    if (value < 1e8) return `${value}${unit}`;
  }
  return "99999999H";
}

const HEX_PAIR_REGEXP = /^[0-9a-fA-F]{2}$/;

/**
 * Decodes a `grpc-message` header value: `%XX` escapes are bytes of UTF-8
 * text. Malformed escapes are kept literally rather than failing the call.
 */
export function decodeGrpcMessage(value: string): string {
  if (!value.includes("%")) return value;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    const hex = value.slice(i + 1, i + 3);
    if (ch === "%" && HEX_PAIR_REGEXP.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
      continue;
    }
    const code = ch.charCodeAt(0);
    if (code < 0x80) bytes.push(code);
    else bytes.push(...encoder.encode(ch));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * gRPC code for a non-200 HTTP status on a response without `grpc-status`
 * (the mapping from the gRPC HTTP/2 protocol notes).
 */
export function grpcCodeFromHttpStatus(status: number): GrpcCode {
  switch (status) {
    case 400:
      return GrpcCode.Internal;
    case 401:
      return GrpcCode.Unauthenticated;
    case 403:
      return GrpcCode.PermissionDenied;
    case 404:
      return GrpcCode.Unimplemented;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcCode.Unavailable;
    default:
      return GrpcCode.Unknown;
  }
}

/** Options for {@link parseCriEndpoint}. */
export interface ParseCriEndpointOptions {
  /** Flag named in error messages (default `--container-runtime-endpoint`). */
  flag?: string;
}

/**
 * Extracts the unix socket path from a CRI endpoint. Accepted forms:
 * `unix:///abs/path`, `unix:/abs/path` and a bare `/abs/path`. Anything else
 * (tcp://, npipe://, relative paths, empty) throws a TypeError naming the flag.
 */
export function parseCriEndpoint(
  endpoint: string,
  options: ParseCriEndpointOptions = {},
): string {
  const flag = options.flag ?? "--container-runtime-endpoint";
  const fail = (why: string): never => {
    throw new TypeError(
      `Invalid ${flag} ${JSON.stringify(endpoint)}: ${why}; ` +
        `use a unix socket such as "unix:///run/containerd/containerd.sock"`,
    );
  };
  const trimmed = endpoint.trim();
  if (trimmed === "") fail("the endpoint is empty");
  let path: string;
  if (trimmed.startsWith("unix://")) {
    path = trimmed.slice("unix://".length);
    if (!path.startsWith("/")) {
      fail("a unix:// endpoint needs an absolute path (three slashes)");
    }
  } else if (trimmed.startsWith("unix:")) {
    path = trimmed.slice("unix:".length);
  } else if (trimmed.startsWith("/")) {
    path = trimmed;
  } else {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1];
    return fail(
      scheme
        ? `scheme "${scheme}" is not supported, only unix sockets are`
        : "expected an absolute socket path or a unix:// URL",
    );
  }
  if (!path.startsWith("/")) fail("the socket path must be absolute");
  if (path.includes("\0")) fail("the socket path contains a NUL byte");
  return path;
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
