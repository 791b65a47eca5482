/**
 * Between node:http's request and response objects and the fetch `Request`/`Response` the
 * handlers speak, for the listeners built on node:http (`tls_serve.ts`, `serve.ts`).
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from "node:http";

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
