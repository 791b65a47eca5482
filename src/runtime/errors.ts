/**
 * Typed errors for CRI calls.
 *
 * Every failed call, whether from a real runtime over gRPC or from the
 * simulated runtime, surfaces as a {@link RuntimeError} carrying the gRPC
 * status code. Callers branch with `instanceof` or the `isX(e)` helpers,
 * never on message text.
 *
 * @module
 */

/** gRPC status codes (numbers as on the wire in `grpc-status`). */
export const GrpcCode = {
  Ok: 0,
  Canceled: 1,
  Unknown: 2,
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Aborted: 10,
  OutOfRange: 11,
  Unimplemented: 12,
  Internal: 13,
  Unavailable: 14,
  DataLoss: 15,
  Unauthenticated: 16,
} as const;

/** One of the {@link GrpcCode} values. */
export type GrpcCode = typeof GrpcCode[keyof typeof GrpcCode];

const CODE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(GrpcCode).map(([name, code]) => [code, name]),
);

/** Human readable name of a gRPC code, e.g. `NotFound`; `Code(42)` for unknown numbers. */
export function grpcCodeName(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}

/** Options accepted by {@link RuntimeError} and its subclasses. */
export interface RuntimeErrorOptions {
  /** Underlying error (network failure, abort reason, ...). */
  cause?: unknown;
  /** Full gRPC method path, e.g. `/runtime.v1.RuntimeService/Version`. */
  method?: string;
}

/**
 * A CRI call failed. `code` is the gRPC status, `grpcMessage` the decoded
 * `grpc-message` text sent by the runtime (or our own description when the
 * failure happened on our side of the wire).
 */
export class RuntimeError extends Error {
  readonly code: GrpcCode;
  readonly grpcMessage: string;
  readonly method: string | undefined;

  constructor(
    code: GrpcCode,
    grpcMessage: string,
    options: RuntimeErrorOptions = {},
  ) {
    const where = options.method ? ` ${options.method}` : "";
    super(
      `CRI call${where} failed: ${grpcCodeName(code)}: ${grpcMessage}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "RuntimeError";
    this.code = code;
    this.grpcMessage = grpcMessage;
    this.method = options.method;
  }
}

/** The object does not exist (gRPC NotFound). */
export class NotFoundError extends RuntimeError {
  constructor(grpcMessage: string, options: RuntimeErrorOptions = {}) {
    super(GrpcCode.NotFound, grpcMessage, options);
    this.name = "NotFoundError";
  }
}

/** The object already exists (gRPC AlreadyExists). */
export class AlreadyExistsError extends RuntimeError {
  constructor(grpcMessage: string, options: RuntimeErrorOptions = {}) {
    super(GrpcCode.AlreadyExists, grpcMessage, options);
    this.name = "AlreadyExistsError";
  }
}

/** The call ran out of time (gRPC DeadlineExceeded). */
export class DeadlineExceededError extends RuntimeError {
  constructor(grpcMessage: string, options: RuntimeErrorOptions = {}) {
    super(GrpcCode.DeadlineExceeded, grpcMessage, options);
    this.name = "DeadlineExceededError";
  }
}

/** The runtime cannot be reached or is not serving (gRPC Unavailable). */
export class RuntimeUnavailableError extends RuntimeError {
  constructor(grpcMessage: string, options: RuntimeErrorOptions = {}) {
    super(GrpcCode.Unavailable, grpcMessage, options);
    this.name = "RuntimeUnavailableError";
  }
}

/** The runtime does not implement this RPC (gRPC Unimplemented). */
export class UnimplementedError extends RuntimeError {
  constructor(grpcMessage: string, options: RuntimeErrorOptions = {}) {
    super(GrpcCode.Unimplemented, grpcMessage, options);
    this.name = "UnimplementedError";
  }
}

/** The caller aborted the call (gRPC Canceled). */
export class CanceledError extends RuntimeError {
  constructor(grpcMessage: string, options: RuntimeErrorOptions = {}) {
    super(GrpcCode.Canceled, grpcMessage, options);
    this.name = "CanceledError";
  }
}

/**
 * Build the most specific error class for a gRPC code. Codes without their
 * own class (InvalidArgument, FailedPrecondition, Unknown, ...) become a plain
 * {@link RuntimeError} with that code.
 */
export function runtimeErrorFromCode(
  code: number,
  grpcMessage: string,
  options: RuntimeErrorOptions = {},
): RuntimeError {
  switch (code) {
    case GrpcCode.NotFound:
      return new NotFoundError(grpcMessage, options);
    case GrpcCode.AlreadyExists:
      return new AlreadyExistsError(grpcMessage, options);
    case GrpcCode.DeadlineExceeded:
      return new DeadlineExceededError(grpcMessage, options);
    case GrpcCode.Unavailable:
      return new RuntimeUnavailableError(grpcMessage, options);
    case GrpcCode.Unimplemented:
      return new UnimplementedError(grpcMessage, options);
    case GrpcCode.Canceled:
      return new CanceledError(grpcMessage, options);
    default: {
      const known = code >= 1 && code <= 16 && Number.isInteger(code);
      return new RuntimeError(
        known ? code as GrpcCode : GrpcCode.Unknown,
        known ? grpcMessage : `${grpcMessage} (grpc-status ${code})`,
        options,
      );
    }
  }
}

function hasCode(error: unknown, code: GrpcCode): boolean {
  return error instanceof RuntimeError && error.code === code;
}

/** True when `error` is a {@link RuntimeError} with code NotFound. */
export function isNotFound(error: unknown): boolean {
  return hasCode(error, GrpcCode.NotFound);
}

/** True when `error` is a {@link RuntimeError} with code AlreadyExists. */
export function isAlreadyExists(error: unknown): boolean {
  return hasCode(error, GrpcCode.AlreadyExists);
}

/** True when `error` is a {@link RuntimeError} with code DeadlineExceeded. */
export function isDeadlineExceeded(error: unknown): boolean {
  return hasCode(error, GrpcCode.DeadlineExceeded);
}

/** True when `error` is a {@link RuntimeError} with code Unavailable. */
export function isUnavailable(error: unknown): boolean {
  return hasCode(error, GrpcCode.Unavailable);
}

/** True when `error` is a {@link RuntimeError} with code Unimplemented. */
export function isUnimplemented(error: unknown): boolean {
  return hasCode(error, GrpcCode.Unimplemented);
}

/** True when `error` is a {@link RuntimeError} with code Canceled. */
export function isCanceled(error: unknown): boolean {
  return hasCode(error, GrpcCode.Canceled);
}
