import assert from "node:assert/strict";
import {
  decodesWithoutViews,
  freshBody,
  KEPT_BUFFER_MAX_BYTES,
  KeptBuffer,
  LARGE_BODY_BYTES,
  readChunks,
} from "./_response_body.ts";
import {
  ExecSyncResponseSchema,
  ListContainersResponseSchema,
  ListPodSandboxResponseSchema,
} from "./gen/api_pb.ts";

const body = (...sizes: number[]) => {
  const chunks = sizes.map((n, i) => new Uint8Array(n).fill(i + 1));
  return { chunks, length: sizes.reduce((a, b) => a + b, 0) };
};

Deno.test("readChunks() gathers a stream's chunks and their length", async () => {
  const stream = new Blob([new Uint8Array([1, 2]), new Uint8Array([3])])
    .stream();
  const read = await readChunks(stream);
  assert.equal(read.length, 3);
  assert.deepEqual(freshBody(read), new Uint8Array([1, 2, 3]));
  assert.deepEqual(await readChunks(null), { chunks: [], length: 0 });
});

Deno.test("KeptBuffer takes only large bodies and reuses its memory for them", () => {
  const kept = new KeptBuffer();
  assert.equal(kept.takes(body(LARGE_BODY_BYTES - 1)), false);
  assert.equal(kept.takes(body(KEPT_BUFFER_MAX_BYTES + 1)), false);
  const a = body(40_000, 40_000);
  assert.equal(kept.takes(a), true);
  const first = kept.gather(a);
  assert.deepEqual(first, freshBody(a));
  const b = body(30_000, 50_000, 10);
  const second = kept.gather(b);
  assert.deepEqual(second, freshBody(b));
  // the same memory both times, not a new block per body
  assert.equal(second.buffer, first.buffer);
  const c = body(200_000);
  assert.deepEqual(kept.gather(c), freshBody(c));
});

Deno.test("decodesWithoutViews() is false only for messages that can hold bytes", () => {
  assert.equal(decodesWithoutViews(ListContainersResponseSchema), true);
  assert.equal(decodesWithoutViews(ListPodSandboxResponseSchema), true);
  assert.equal(decodesWithoutViews(ExecSyncResponseSchema), false);
});
