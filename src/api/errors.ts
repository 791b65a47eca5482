/**
 * Errors of API calls, by meaning. {@linkcode ApiStatusError} carries the HTTP status and the
 * `metav1.Status` reason; the subclasses are the conditions callers branch on.
 * @module
 */

/** A request the API server answered with a failure status. */
export class ApiStatusError extends Error {
  /** HTTP status code, e.g. 403. */
  readonly code: number;
  /** `metav1.Status.reason`, e.g. "Forbidden"; empty when the body had none. */
  readonly reason: string;
  /**
   * The server's own text (`metav1.Status.message`, what client-go's errors print); the
   * message when none was given.
   */
  readonly statusMessage: string;
  constructor(
    message: string,
    init: {
      code: number;
      reason?: string;
      cause?: unknown;
      statusMessage?: string;
    },
  ) {
    super(message, init.cause === undefined ? {} : { cause: init.cause });
    this.name = "ApiStatusError";
    this.code = init.code;
    this.reason = init.reason ?? "";
    this.statusMessage = init.statusMessage ?? message;
  }
}

/** 404: the object does not exist. */
export class ApiNotFoundError extends ApiStatusError {
  override name = "ApiNotFoundError";
}

/** 409 Conflict: a write with a stale resourceVersion. */
export class ApiConflictError extends ApiStatusError {
  override name = "ApiConflictError";
}

/** 409 AlreadyExists: a create of an object that exists. */
export class ApiAlreadyExistsError extends ApiStatusError {
  override name = "ApiAlreadyExistsError";
}

/** Builds the error class that matches an answer's status and reason. */
export function apiStatusError(
  message: string,
  init: { code: number; reason?: string; statusMessage?: string },
): ApiStatusError {
  if (init.code === 404) return new ApiNotFoundError(message, init);
  if (init.code === 409 && init.reason === "AlreadyExists") {
    return new ApiAlreadyExistsError(message, init);
  }
  if (init.code === 409) return new ApiConflictError(message, init);
  return new ApiStatusError(message, init);
}

/**
 * A watch stream reports failures (e.g. "too old resource version", 410) as an ERROR event
 * carrying a `metav1.Status`; this throws it as the matching error, naming `what` was watched.
 */
export function throwIfWatchError(raw: unknown, what: string): void {
  const event = raw as {
    type?: string;
    object?: { code?: number; reason?: string; message?: string };
  };
  if (event.type !== "ERROR") return;
  throw apiStatusError(
    `watch ${what} failed: ${event.object?.message ?? "unknown error"}`,
    {
      code: event.object?.code ?? 500,
      ...(event.object?.reason ? { reason: event.object.reason } : {}),
    },
  );
}
