import assert from "node:assert/strict";
import type { CallScope } from "./_grpc_call.ts";
import { InflightCalls } from "./_inflight_calls.ts";

/**
 * Resolves with the clock reading (`performance.now()`, the clock deadlines
 * use) at which the scope's signal aborted; rejects after `limitMs`.
 */
function aborted(scope: CallScope, limitMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const limit = setTimeout(
      () => reject(new Error(`not aborted within ${limitMs} ms`)),
      limitMs,
    );
    scope.signal.addEventListener("abort", () => {
      clearTimeout(limit);
      resolve(performance.now());
    }, { once: true });
  });
}

Deno.test("InflightCalls aborts a call at its deadline and leaves later ones running", async () => {
  const calls = new InflightCalls();
  try {
    const short = calls.open(undefined, 30);
    const long = calls.open(undefined, 60_000);
    const at = await aborted(short, 5_000);
    // measured against the deadline itself: time spent between open() and
    // the wait (a busy machine) must not count as early
    assert.ok(
      at >= short.deadline,
      `aborted ${short.deadline - at} ms before the deadline`,
    );
    assert.equal(short.reason, "deadline");
    assert.equal(short.signal.reason, "deadline");
    assert.equal(long.reason, undefined);
    assert.equal(long.signal.aborted, false);
    // the timer moved on to the remaining call's deadline
    assert.equal(calls.armedFor, long.deadline);
  } finally {
    calls.close();
  }
});

Deno.test("InflightCalls re-arms for a deadline earlier than the armed one", async () => {
  const calls = new InflightCalls();
  try {
    const long = calls.open(undefined, 60_000);
    assert.equal(calls.armedFor, long.deadline);
    const short = calls.open(undefined, 20);
    assert.equal(calls.armedFor, short.deadline);
    await aborted(short, 5_000);
    assert.equal(short.reason, "deadline");
    assert.equal(long.reason, undefined);
  } finally {
    calls.close();
  }
});

Deno.test("InflightCalls keeps a stale timer and never aborts a later call early", async () => {
  const calls = new InflightCalls();
  try {
    // the first call finishes at once; its timer stays armed (no clear per call)
    const first = calls.open(undefined, 20);
    calls.release(first);
    assert.equal(calls.armedFor, first.deadline);
    const second = calls.open(undefined, 80);
    // later than the armed deadline: no timer work for this call
    assert.equal(calls.armedFor, first.deadline);
    const at = await aborted(second, 5_000);
    assert.ok(
      at >= second.deadline,
      `aborted ${second.deadline - at} ms before the deadline`,
    );
    assert.equal(second.reason, "deadline");
    assert.equal(first.reason, undefined);
    assert.equal(calls.armedFor, Infinity);
  } finally {
    calls.close();
  }
});

Deno.test("InflightCalls.open() without a deadline arms nothing", () => {
  const calls = new InflightCalls();
  const scope = calls.open(undefined, undefined);
  assert.equal(scope.deadline, Infinity);
  assert.equal(calls.armedFor, Infinity);
  calls.release(scope);
  calls.close();
});

Deno.test("InflightCalls links the caller's signal until release", () => {
  const calls = new InflightCalls();
  const early = new AbortController();
  early.abort(new Error("gone"));
  assert.equal(calls.open(early.signal, 1_000).reason, "canceled");
  // an already canceled call needs no deadline timer
  assert.equal(calls.armedFor, Infinity);

  const caller = new AbortController();
  const canceled = calls.open(caller.signal, 60_000);
  caller.abort(new Error("pod deleted"));
  assert.equal(canceled.reason, "canceled");
  assert.equal(canceled.signal.aborted, true);

  const later = new AbortController();
  const released = calls.open(later.signal, 60_000);
  calls.release(released);
  later.abort();
  assert.equal(released.reason, undefined);
  assert.equal(released.signal.aborted, false);
  calls.close();
});

Deno.test("InflightCalls.close() aborts open calls, disarms and is idempotent", () => {
  const calls = new InflightCalls();
  const open = calls.open(undefined, 60_000);
  const done = calls.open(undefined, 60_000);
  calls.release(done);
  assert.equal(calls.size, 1);
  calls.close();
  calls.close();
  assert.equal(open.reason, "closed");
  assert.equal(done.reason, undefined);
  assert.equal(calls.armedFor, Infinity);
  assert.equal(calls.size, 0);
  const after = calls.open(undefined, 60_000);
  assert.equal(after.reason, "closed");
  assert.equal(calls.armedFor, Infinity);
});
