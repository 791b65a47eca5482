/**
 * Responses whose whole body exists when they are made (health answers, errors, the kept
 * `/pods` list). The node:http bridge writes such a body in one call instead of pumping the
 * `ReadableStream` behind every `Response` body (about 0.05 ms of a /healthz answer),
 * and never copies it; anyone else reads an ordinary `Response`.
 *
 * @module
 */

const BODIES = new WeakMap<Response, Uint8Array>();
const COPY_SIZE = 64 * 1024;

/** A response with `body` as it is (the bytes are not copied, so they must not change). */
export function fixedResponse(
  status: number,
  body: Uint8Array<ArrayBuffer>,
  headers: Record<string, string>,
): Response {
  // `Response` copies a byte body: cheaper than a stream for a short one, far dearer for long
  const response = new Response(
    body.length <= COPY_SIZE ? body : new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(body);
        controller.close();
      },
    }),
    { status },
  );
  // set one by one: a headers record in the init costs 4 µs of WebIDL conversion, these 1 µs
  for (const [name, value] of Object.entries(headers)) {
    response.headers.set(name, value);
  }
  BODIES.set(response, body);
  return response;
}

/** The body of a {@linkcode fixedResponse}, else undefined. */
export function fixedBody(response: Response): Uint8Array | undefined {
  return BODIES.get(response);
}
