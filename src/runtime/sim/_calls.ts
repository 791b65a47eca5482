/**
 * Admission of calls to the simulated runtime: every call is logged (for
 * tests, and at `-v=5`), then refused when the runtime is closed, the call's
 * signal has aborted or a test queued an error for that method.
 */

import type { Logger } from "../../log/mod.ts";
import { CallLog } from "../_call_log.ts";
import { CanceledError, RuntimeUnavailableError } from "../errors.ts";
import type { CallOptions, CriMethodName } from "../types.ts";

/** The call gate every part of the simulated runtime goes through. */
export class SimCalls {
  readonly log: CallLog = new CallLog();
  readonly #logger: Logger | undefined;
  #closed = false;

  constructor(logger: Logger | undefined) {
    this.#logger = logger;
  }

  /** Refuses every later call with Unavailable. Idempotent. */
  close(): void {
    this.#closed = true;
  }

  /** {@linkcode SimCalls.enterSync} as a promise, for async RPCs. */
  enter(
    method: CriMethodName,
    options: CallOptions | undefined,
  ): Promise<void> {
    try {
      this.enterSync(method, options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Records a call and throws what tests injected, a cancel or a closed error. */
  enterSync(method: CriMethodName, options: CallOptions | undefined): void {
    this.log.record(method);
    this.#logger?.v(5).info("Simulated CRI call", { method });
    if (this.#closed) {
      throw new RuntimeUnavailableError("simulated runtime is closed");
    }
    if (options?.signal?.aborted) {
      throw new CanceledError("context canceled", {
        cause: options.signal.reason,
      });
    }
    const error = this.log.nextError(method);
    if (error) throw error;
  }
}
