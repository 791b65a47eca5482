/**
 * Between node:http's request and response objects and the fetch `Request`/`Response` the
 * handlers speak, for the listeners built on node:http (`tls_serve.ts`, `serve.ts`).
 *
 * @module
 */

import type { IncomingMessage, Server, ServerResponse } from "node:http";

/** A node:http request as a fetch `Request` (no body: no route reads one) below `origin`. */
export function toRequest(req: IncomingMessage, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      headers.append(name, v);
    }
  }
  let url: URL;
  try {
    url = new URL(req.url ?? "/", origin);
  } catch {
    url = new URL(`${origin}/`);
  }
  return new Request(url, { method: req.method ?? "GET", headers });
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
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const closed = () => void reader.cancel().catch(() => {});
  res.once("close", closed);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          res.once("drain", resolve);
          res.once("close", resolve);
        });
      }
      if (res.destroyed) break;
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    res.off("close", closed);
  }
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
