/**
 * Between node:http's request and response objects and the fetch `Request`/`Response` the
 * handlers speak, for the listeners built on node:http (`tls_serve.ts`, `serve.ts`).
 *
 * @module
 */

import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { fixedBody } from "./fixed_body.ts";
import type { HttpRequest } from "./http_request.ts";

/** Go's `bufferBeforeChunkingSize`: longer bodies go out chunked. */
const CHUNKING_SIZE = 2048;

/**
 * A path target that resolves below any origin the same as appended to it: not `//host` nor
 * `/\host`, and no tab or newline, which URL parsing drops (`/<tab>/host` is `//host`).
 */
const ORIGIN_FORM = /^\/(?![/\\])[^\t\n\r]*$/;

/** A node:http request as the handlers see it, below `origin`. */
export function toRequest(req: IncomingMessage, origin: string): HttpRequest {
  const target = req.url ?? "/";
  // an origin-form target needs no parsing here: the handler parses the URL anyway
  let url = `${origin}${target}`;
  if (!ORIGIN_FORM.test(target)) {
    try {
      url = new URL(target, origin).href;
    } catch {
      url = `${origin}/`;
    }
  }
  // node:http has already lower-cased the names, dropped the repeats of single-valued
  // headers (authorization among them) and joined the rest, except set-cookie
  const headers = req.headers;
  return {
    method: req.method ?? "GET",
    url,
    headers: {
      get(name) {
        const value = headers[name.toLowerCase()];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(", ") : value;
      },
    },
  };
}

/** Writes a fetch `Response` to a node:http response, streaming its body with back-pressure. */
export async function writeResponse(
  response: Response,
  res: ServerResponse,
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = name === "set-cookie"
      ? [...((headers[name] as string[] | undefined) ?? []), value]
      : value;
  });
  const fixed = fixedBody(response);
  if (fixed) {
    // Go's net/http sends a short answer with its length and a long one chunked
    if (fixed.length <= CHUNKING_SIZE) {
      headers["content-length"] = String(fixed.length);
    }
    res.writeHead(response.status, headers);
    res.end(fixed);
    return;
  }
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const closed = () => void reader.cancel().catch(() => {});
  res.once("close", closed);
  let sent: Promise<void> | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const { promise, resolve } = Promise.withResolvers<void>();
      sent = promise;
      if (!res.write(value, () => resolve())) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      }
      if (res.destroyed) break;
    }
    if (sent) await endApart(sent, res);
    res.end();
  } catch {
    res.destroy();
  } finally {
    res.off("close", closed);
  }
}

/**
 * Waits until the last streamed bytes are on their way, then a macrotask, so that the end of
 * the body goes out in a write of its own, as after Go's flushing writer. A reader that gets
 * the last bytes together with the end may drop them: the API server's websocket copy of a
 * pod log (wsstream) returns on `io.EOF` without sending what came with it, which made
 * `kubectl logs` over a websocket empty.
 */
async function endApart(
  sent: Promise<void>,
  res: ServerResponse,
): Promise<void> {
  // a connection closed meanwhile never calls back
  const closed = new Promise<void>((resolve) => res.once("close", resolve));
  if (!res.destroyed) await Promise.race([sent, closed]);
  await new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Binds `server` on `hostname:port`, reports the bound address, waits for `signal` and closes
 * it (`all`: every connection at once; else idle ones, letting in-flight requests finish).
 * A bind failure rejects with `toError(cause)` and leaves nothing open.
 */
export async function listenUntilAborted(
  server: Server,
  options: {
    hostname: string;
    port: number;
    signal: AbortSignal;
    onListen?: ((addr: Deno.NetAddr) => void) | undefined;
    closeAll: boolean;
  },
  toError: (cause: unknown) => Error,
): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(
        options.port,
        options.hostname.replace(/^\[(.*)\]$/, "$1"),
        () => resolve(),
      );
    });
  } catch (cause) {
    server.close();
    throw toError(cause);
  }
  const bound = server.address();
  if (bound && typeof bound === "object") {
    options.onListen?.({
      transport: "tcp",
      hostname: bound.address,
      port: bound.port,
    });
  }
  if (!options.signal.aborted) {
    await new Promise<void>((resolve) =>
      options.signal.addEventListener("abort", () => resolve(), { once: true })
    );
  }
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    if (options.closeAll) server.closeAllConnections();
    else server.closeIdleConnections();
  });
}
