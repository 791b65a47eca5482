/**
 * Per-call plumbing for the gRPC transport: one AbortController fed by the
 * caller's signal, the deadline timer and transport close, plus conversion of
 * whatever fetch threw into a typed RuntimeError.
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

/**
 * Host used in request URLs (and so the HTTP/2 `:authority`). The bytes go to
 * the unix socket regardless, but Deno still checks `--allow-net` for the
 * URL's host:port (measured on 2.9.6). A reserved `.invalid` name (RFC 6761)
 * can never resolve, so granting it widens nothing, unlike `localhost:80`.
 */
export const CRI_URL_HOST = "cri.invalid";

export type Reason = "deadline" | "canceled" | "closed";

/** Abort plumbing for one call: caller signal + deadline + transport close. */
export class CallScope {
  readonly controller = new AbortController();
  reason: Reason | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #cleanup: Array<() => void> = [];
  readonly #userSignal: AbortSignal | undefined;

  /**
   * The transport's close is not linked here as a signal listener (one
   * add/remove per call on the hot path): the transport keeps its in-flight
   * scopes and calls {@linkcode CallScope.close} on each.
   */
  constructor(
    userSignal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    this.#userSignal = userSignal;
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

  /** Aborts the call because its transport was closed. */
  close(): void {
    this.#abort("closed");
  }

  #abort(reason: Reason): void {
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

  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const undo of this.#cleanup) undo();
    this.#cleanup = [];
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
