/**
 * Per-call plumbing for the gRPC transport: one AbortController fed by the
 * caller's signal, the deadline (see `_inflight_calls.ts`) and transport
 * close, plus conversion of whatever fetch threw into a typed RuntimeError.
 *
 * @module
 */

import { formatGoDuration } from "../util/go_duration.ts";
import {
  CanceledError,
  DeadlineExceededError,
  GrpcCode,
  RuntimeError,
  RuntimeUnavailableError,
} from "./errors.ts";
import { errorMessage } from "../util/error_message.ts";

/**
 * Host used in request URLs (and so the HTTP/2 `:authority`). The bytes go to
 * the unix socket regardless, but Deno still checks `--allow-net` for the
 * URL's host:port (measured on 2.9.6). A reserved `.invalid` name (RFC 6761)
 * can never resolve, so granting it widens nothing, unlike `localhost:80`.
 */
export const CRI_URL_HOST = "cri.invalid";

export type Reason = "deadline" | "canceled" | "closed";

/**
 * Abort plumbing for one call. Its controller is aborted by the caller's
 * signal, by {@link InflightCalls} when the deadline passes, or by transport
 * close; {@linkcode CallScope.reason} records which came first.
 */
export class CallScope {
  readonly controller: AbortController = new AbortController();
  reason: Reason | undefined = undefined;
  /** `performance.now()` time the deadline passes; Infinity for none. */
  readonly deadline: number;
  readonly #userSignal: AbortSignal | undefined;
  #onUserAbort: (() => void) | undefined = undefined;

  constructor(userSignal: AbortSignal | undefined, deadline: number) {
    this.deadline = deadline;
    this.#userSignal = userSignal;
    if (userSignal === undefined) return;
    if (userSignal.aborted) {
      this.abort("canceled");
      return;
    }
    // a listener only when the caller passed a signal: no closure otherwise
    this.#onUserAbort = () => this.abort("canceled");
    userSignal.addEventListener("abort", this.#onUserAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Aborts the call; only the first reason counts. */
  abort(reason: Reason): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller.abort(reason);
  }

  /** Converts whatever was thrown during the call into a RuntimeError. */
  translate(
    error: unknown,
    context: {
      method: string;
      socketPath: string;
      flag: string;
      timeoutMs?: number;
    },
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
    const denied = permissionError(error, context.socketPath, context.flag);
    if (denied) return denied;
    return new RuntimeUnavailableError(
      `cannot reach the container runtime at "${context.socketPath}": ${
        describeFetchError(error)
      }`,
      { method, cause: error },
    );
  }

  /** Unlinks the caller's signal; call once the call has finished. */
  dispose(): void {
    if (this.#onUserAbort !== undefined) {
      this.#userSignal?.removeEventListener("abort", this.#onUserAbort);
      this.#onUserAbort = undefined;
    }
  }
}

/**
 * A Deno permission failure (`NotCapable`) as a PermissionDenied
 * RuntimeError that spells out the grant; undefined for other errors.
 */
export function permissionError(
  error: unknown,
  socketPath: string,
  flag = "--container-runtime-endpoint",
): RuntimeError | undefined {
  if (!(error instanceof Deno.errors.NotCapable)) return undefined;
  return new RuntimeError(
    GrpcCode.PermissionDenied,
    `cannot use ${flag} socket "${socketPath}": ${error.message}; the kubelet needs ` +
      `--allow-read=${socketPath} --allow-write=${socketPath} ` +
      `--allow-net=unix:${socketPath},${CRI_URL_HOST}:80`,
    { cause: error },
  );
}

export function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const text = cause instanceof Error ? cause.message : errorMessage(error);
  return text.replace(/^error sending request for url \([^)]*\): /, "");
}

/** True for failures to open the connection (nothing was sent). */
export function isConnectError(error: unknown): boolean {
  const text = describeFetchError(error);
  return /\(Connect\)|os error (2|111)\b/.test(text);
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
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
