/**
 * The HTTP client of `httpGet` probes and lifecycle hooks (upstream's prober transport and
 * the kubelet's lifecycle client): one GET to a pod, same-host redirects followed, HTTPS
 * without certificate verification.
 *
 * Pods serve certificates the node does not trust, so upstream skips verification. Deno's
 * `fetch` and `Deno.connectTls` always verify the chain, and the global
 * `--unsafely-ignore-certificate-errors` switch would turn verification off for the API
 * server connection too. `node:tls` with `rejectUnauthorized: false` skips it for one
 * connection and needs only the `--allow-net` grant of the pod address (measured under
 * the bundled binary's lists, docs/permissions.md), so HTTPS requests are written as
 * HTTP/1.1 on such a connection here. Plain HTTP stays on `fetch`.
 *
 * @module
 */

import * as tls from "node:tls";
import { isIP } from "node:net";
import { concatBytes } from "../../util/bytes.ts";
import { decodeHttp1Response, type Http1Response } from "./http1_response.ts";

/** Body bytes kept of a response (upstream reads at most 10 KiB of a probe's body). */
export const BODY_LIMIT = 10 * 1024;
/** Same-host redirects followed before giving up (as upstream's redirect checker). */
export const MAX_REDIRECTS = 10;

/**
 * The statuses Go's `http.Client` follows (`redirectBehavior`): a 300, 304 or 305 with a
 * `Location` is an answer, not a redirect.
 */
const FOLLOWED_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The result of {@linkcode getFollowingRedirects}. */
export interface PodGetResult {
  response: Response;
  /** The URL the response came from. */
  url: string;
  /** Set when a redirect pointed to another host: it is not followed, as upstream. */
  offHostLocation?: string;
}

/**
 * One GET to a pod: `http:` through `fetch`, `https:` over TLS without certificate
 * verification. Redirects are returned, not followed.
 */
export function podFetch(
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input);
  if (url.protocol === "https:") {
    return insecureTlsGet(url, new Headers(init?.headers), init?.signal);
  }
  return fetch(input, { ...init, redirect: "manual" });
}

/**
 * GETs `url`, following redirects (301, 302, 303, 307, 308) to the same host name up to {@linkcode MAX_REDIRECTS}
 * times (more fail), and stopping at one to another host.
 */
export async function getFollowingRedirects(
  doFetch: typeof fetch,
  url: string,
  headers: Headers,
  signal?: AbortSignal,
): Promise<PodGetResult> {
  const first = new URL(url);
  let current = url;
  for (let redirects = 0;; redirects++) {
    const response = await doFetch(current, {
      method: "GET",
      headers,
      redirect: "manual",
      ...(signal ? { signal } : {}),
    });
    const location = response.headers.get("location");
    if (!location || !FOLLOWED_STATUSES.has(response.status)) {
      return { response, url: current };
    }
    const next = new URL(location, current);
    if (next.hostname !== first.hostname) {
      return { response, url: current, offHostLocation: next.href };
    }
    await response.body?.cancel();
    if (redirects + 1 >= MAX_REDIRECTS) {
      throw new Error(`stopped after ${MAX_REDIRECTS} redirects`);
    }
    current = next.href;
  }
}

/** The request bytes of a GET: the caller's headers, `Host` from them or the URL. */
export function http1GetRequest(url: URL, headers: Headers): string {
  const port = url.port || "443";
  const host = headers.get("host") ?? `${url.hostname}:${port}`;
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `Host: ${host}`];
  for (const [name, value] of headers) {
    if (name !== "host" && name !== "connection") {
      lines.push(`${name}: ${value}`);
    }
  }
  lines.push("Connection: close", "", "");
  return lines.join("\r\n");
}

/** Statuses a `Response` must be built without a body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function toResponse(decoded: Http1Response): Response {
  if (decoded.status < 200 || decoded.status > 599) {
    throw new Error(`unsupported HTTP status ${decoded.status}`);
  }
  return new Response(
    NULL_BODY.has(decoded.status) ? null : decoded.body.slice(),
    {
      status: decoded.status,
      statusText: decoded.statusText,
      headers: decoded.headers,
    },
  );
}

function insecureTlsGet(
  url: URL,
  headers: Headers,
  signal?: AbortSignal | null,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const socket = tls.connect({
      host,
      port: Number(url.port || 443),
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
      // no SNI for an IP address, as Go's client
      ...(isIP(host) ? {} : { servername: host }),
    });
    let received = new Uint8Array();
    let settled = false;
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      socket.destroy();
      done();
    };
    const onAbort = () => settle(() => reject(signal!.reason));
    signal?.addEventListener("abort", onAbort, { once: true });
    const decode = (ended: boolean) => {
      try {
        const decoded = decodeHttp1Response(received, ended, BODY_LIMIT);
        if (decoded) settle(() => resolve(toResponse(decoded)));
      } catch (error) {
        settle(() => reject(error));
      }
    };
    socket.on(
      "secureConnect",
      () => socket.write(http1GetRequest(url, headers)),
    );
    socket.on("data", (chunk: Uint8Array) => {
      received = concatBytes([received, chunk]);
      decode(false);
    });
    socket.on("end", () => decode(true));
    socket.on("close", () => decode(true));
    socket.on("error", (error: Error) => settle(() => reject(error)));
  });
}

/** Up to `limit` bytes of a response body as text; the rest is not read. */
export async function readPrefix(
  response: Response,
  limit: number,
): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const bytes = concatBytes(parts);
  return new TextDecoder().decode(bytes.subarray(0, limit));
}
