/**
 * The test hooks every runtime double carries (after cri-api's
 * `FakeRuntimeService`): the log of CRI methods called, in order, and errors
 * queued per method by the test. Used by the simulated runtime and by the
 * recording fake in `testing.ts`.
 *
 * @module
 */

import type { CriMethodName } from "./types.ts";

/** Call log plus per-method error queues. */
export class CallLog {
  /** Every CRI method called, in order (including calls that failed). */
  readonly calls: CriMethodName[] = [];
  readonly #errors = new Map<CriMethodName, Error[]>();

  /** Makes the next call of `method` fail with `error` (errors queue up). */
  injectError(method: CriMethodName, error: Error): void {
    const queued = this.#errors.get(method);
    if (queued) queued.push(error);
    else this.#errors.set(method, [error]);
  }

  /** Appends `method` to {@linkcode CallLog.calls}. */
  record(method: CriMethodName): void {
    this.calls.push(method);
  }

  /** Takes the next error queued for `method`, if any. */
  nextError(method: CriMethodName): Error | undefined {
    const queued = this.#errors.get(method);
    const error = queued?.shift();
    if (queued && queued.length === 0) this.#errors.delete(method);
    return error;
  }
}
