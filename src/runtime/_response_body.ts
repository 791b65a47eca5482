/**
 * Reading a unary gRPC response body into one contiguous array.
 *
 * Why not `response.bytes()`: it allocates a fresh array per body. A body of 128 KiB or more
 * (the relist answers from about 100 pods on, every second) is then an mmap'd malloc block,
 * and when glibc frees one it raises its mmap threshold to that size, so every later body of
 * that size comes from the main heap and leaves it fragmented: at 110 pods the main arena
 * held 45 MiB, 30 with this buffer (docs/performance.md). Large bodies are therefore
 * gathered into one buffer the transport keeps and reuses. Its contents are only valid until
 * the next large body, so the caller decodes synchronously, right after
 * {@linkcode KeptBuffer.gather}, and only messages that cannot hold views into their input
 * (no `bytes` fields, unknown fields not kept).
 *
 * @module
 */

import {
  type DescField,
  type DescMessage,
  ScalarType,
} from "@bufbuild/protobuf";

/** Bodies from this size on go into the kept buffer. */
export const LARGE_BODY_BYTES = 64 * 1024;
/** Bodies above this size get an array of their own, so a rare huge answer is not kept. */
export const KEPT_BUFFER_MAX_BYTES = 4 * 1024 * 1024;

/** A body as its chunks arrived. */
export interface BodyChunks {
  chunks: Uint8Array[];
  length: number;
}

/** Reads a whole body; a missing body is empty. */
export async function readChunks(
  body: ReadableStream<Uint8Array> | null,
): Promise<BodyChunks> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  if (!body) return { chunks, length };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { chunks, length };
      chunks.push(value);
      length += value.length;
    }
  } finally {
    reader.releaseLock();
  }
}

function copyInto(target: Uint8Array, { chunks }: BodyChunks): void {
  let at = 0;
  for (const chunk of chunks) {
    target.set(chunk, at);
    at += chunk.length;
  }
}

/** The body in an array of its own (a chunk of its own when there is only one). */
export function freshBody(body: BodyChunks): Uint8Array {
  if (body.chunks.length === 1) return body.chunks[0]!;
  const out = new Uint8Array(body.length);
  copyInto(out, body);
  return out;
}

/** One reusable buffer for large bodies. */
export class KeptBuffer {
  #buffer = new Uint8Array(0);

  /** True when `body` should be gathered here rather than into an array of its own. */
  takes(body: BodyChunks): boolean {
    return body.length >= LARGE_BODY_BYTES &&
      body.length <= KEPT_BUFFER_MAX_BYTES;
  }

  /**
   * The body as a view of the kept buffer, valid until the next call; grows the buffer to
   * the next power of two when the body does not fit.
   */
  gather(body: BodyChunks): Uint8Array {
    if (this.#buffer.length < body.length) {
      let size = LARGE_BODY_BYTES;
      while (size < body.length) size *= 2;
      this.#buffer = new Uint8Array(size);
    }
    copyInto(this.#buffer, body);
    return this.#buffer.subarray(0, body.length);
  }
}

const viewFree = new WeakMap<DescMessage, boolean>();

function fieldHoldsBytes(field: DescField, seen: Set<DescMessage>): boolean {
  switch (field.fieldKind) {
    case "scalar":
      return field.scalar === ScalarType.BYTES;
    case "enum":
      return false;
    case "message":
      return holdsBytes(field.message, seen);
    case "list":
      return field.listKind === "message"
        ? holdsBytes(field.message, seen)
        : field.listKind === "scalar" && field.scalar === ScalarType.BYTES;
    case "map":
      return field.mapKind === "message"
        ? holdsBytes(field.message, seen)
        : field.mapKind === "scalar" && field.scalar === ScalarType.BYTES;
  }
}

function holdsBytes(schema: DescMessage, seen: Set<DescMessage>): boolean {
  if (seen.has(schema)) return false;
  seen.add(schema);
  return schema.fields.some((field) => fieldHoldsBytes(field, seen));
}

/**
 * True when a message of `schema` decoded without unknown fields holds no view into its
 * input: no `bytes` field anywhere in it (decoded `bytes` are views of the input).
 */
export function decodesWithoutViews(schema: DescMessage): boolean {
  let known = viewFree.get(schema);
  if (known === undefined) {
    known = !holdsBytes(schema, new Set());
    viewFree.set(schema, known);
  }
  return known;
}
