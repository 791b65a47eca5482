/**
 * Upgraded connections (exec, attach, port-forward) proxied to the runtime's streaming server,
 * as upstream's `proxyStream` does with an upgrade-aware proxy: the client's HTTP Upgrade
 * request (SPDY/3.1 or WebSocket `v4`/`v5.channel.k8s.io`) is written to the streaming URL
 * CRI handed out, the runtime's answer is relayed, and after a 101 the bytes are piped both
 * ways untouched. The kubelet never parses SPDY or WebSocket frames.
 *
 * A route asks for this by returning {@linkcode upgradeResponse}; the HTTPS transport then
 * calls {@linkcode proxyUpgrade} with the client's socket. Any answer other than 101 is
 * relayed and the connection closed, so no further request can ride on a failed upgrade
 * (CVE-2018-1002105); a 3xx from the runtime is never followed (CVE-2020-8559).
 *
 * @module
 */

import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { STATUS_CODES } from "node:http";
import type { Logger } from "../log/mod.ts";
import { textResponse } from "./http_error.ts";
import type { RequestHeaders } from "./http_request.ts";
import { errorMessage } from "../util/error_message.ts";

const TARGETS = new WeakMap<Response, URL>();

/** A response that tells the transport to proxy the upgrade to `target`. */
export function upgradeResponse(target: URL): Response {
  const response = new Response(null, { status: 204 });
  TARGETS.set(response, target);
  return response;
}

/** The streaming URL of an {@linkcode upgradeResponse}, else undefined. */
export function upgradeTarget(response: Response): URL | undefined {
  return TARGETS.get(response);
}

/**
 * An HTTP Upgrade request: a `Connection` header with the `upgrade` token (Go's
 * `httpstream.IsUpgradeRequest`) and an `Upgrade` header (what makes node:http hand the
 * socket over).
 */
export function isUpgradeRequest(headers: RequestHeaders): boolean {
  return !!headers.get("upgrade") &&
    (headers.get("connection") ?? "").split(",").some((token) =>
      token.trim().toLowerCase() === "upgrade"
    );
}

/** What the proxy needs of the client's request. */
export interface UpgradeRequest {
  method: string;
  /** Header names and values as received, alternating (node's `rawHeaders`). */
  rawHeaders: readonly string[];
  /** The client's address, for `X-Forwarded-For`. */
  remoteAddress?: string | undefined;
}

/** Options of {@linkcode proxyUpgrade}. */
export interface ProxyUpgradeOptions {
  logger: Logger;
  /** Time to connect to the streaming server and receive its answer (default 30 s). */
  responseTimeoutMs?: number;
}

/** Headers never passed to the streaming server. */
const DROPPED_HEADERS = new Set([
  "host",
  "authorization",
  "proxy-authorization",
  "x-forwarded-for",
  "content-length",
  "transfer-encoding",
]);

/** The request head sent to the streaming server (pure). */
export function upstreamRequestHead(
  request: UpgradeRequest,
  target: URL,
): string {
  const lines = [
    `${request.method} ${target.pathname}${target.search} HTTP/1.1`,
    `Host: ${target.host}`,
  ];
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    if (DROPPED_HEADERS.has(name.toLowerCase())) continue;
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) continue;
    lines.push(`${name}: ${value}`);
  }
  if (request.remoteAddress) {
    lines.push(`X-Forwarded-For: ${request.remoteAddress}`);
  }
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** Status code and `Content-Length` of a response head; undefined when malformed. */
export function parseResponseHead(
  head: string,
): { status: number; contentLength?: number } | undefined {
  const match = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/.exec(head);
  if (!match) return undefined;
  const length = /\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n/i.exec(head);
  return {
    status: Number(match[1]),
    ...(length ? { contentLength: Number(length[1]) } : {}),
  };
}

const MAX_RESPONSE_HEAD = 64 * 1024;
const HEAD_END = "\r\n\r\n";

/**
 * Writes `response` on the client's socket as HTTP/1.1 with `Connection: close`, body until
 * the end, then closes: the answer to an upgrade request that is not proxied.
 */
export async function writeRawResponse(
  client: Duplex,
  response: Response,
): Promise<void> {
  const lines = [
    `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ""}`,
  ];
  response.headers.forEach((value, name) => {
    if (name !== "connection" && name !== "content-length") {
      lines.push(`${name}: ${value}`);
    }
  });
  lines.push("connection: close");
  client.write(`${lines.join("\r\n")}\r\n\r\n`);
  if (response.body) {
    try {
      for await (const chunk of response.body) {
        if (client.destroyed) break;
        client.write(chunk);
      }
    } catch {
      // the body failed half-way: the closed connection tells the client
    }
  }
  client.end();
}

function rawError(client: Duplex, status: number, message: string) {
  return writeRawResponse(client, textResponse(status, `${message}\n`));
}

/**
 * Proxies an upgrade request to `target` and pipes both ways until either side closes.
 * `head` holds any bytes the client sent after its request head. Never rejects.
 */
export async function proxyUpgrade(
  client: Duplex,
  head: Uint8Array,
  request: UpgradeRequest,
  target: URL,
  options: ProxyUpgradeOptions,
): Promise<void> {
  const { logger } = options;
  if (target.protocol !== "http:") {
    logger.error("Unsupported streaming server URL", { url: target.origin });
    await rawError(
      client,
      500,
      `the container runtime's streaming URL scheme "${target.protocol}" is not supported; serve the runtime's streaming server over plain HTTP on a local address`,
    );
    return;
  }
  let backend: Socket | undefined;
  const closeBoth = () => {
    backend?.destroy();
    client.destroy();
  };
  client.on("error", closeBoth);
  client.on("close", closeBoth);
  let answer: { raw: Uint8Array; status: number; contentLength?: number };
  try {
    // A missing net grant throws here (NotCapable), before any byte is sent.
    // Go's dialer turns Nagle off, and so do we: a small frame written while an earlier one
    // is unacknowledged must not wait for the acknowledgement.
    backend = connect({
      host: target.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: Number(target.port || 80),
      noDelay: true,
    });
    answer = await sendAndReadHead(backend, request, target, head, options);
  } catch (error) {
    const message = errorMessage(error);
    logger.error("Cannot reach the container runtime's streaming server", {
      url: target.origin,
      err: message,
    });
    backend?.destroy();
    await rawError(
      client,
      502,
      `cannot reach the container runtime's streaming server at ${target.origin}: ${message}`,
    );
    return;
  }
  const upstream = backend;
  if (answer.status !== 101) {
    await relayAndClose(upstream, client, answer);
    return;
  }
  client.write(answer.raw);
  upstream.pipe(client);
  client.pipe(upstream);
  upstream.on("error", closeBoth);
  upstream.on("close", closeBoth);
}

/** Connects, sends the request head and reads the response head (with any bytes after it). */
function sendAndReadHead(
  backend: Socket,
  request: UpgradeRequest,
  target: URL,
  head: Uint8Array,
  options: ProxyUpgradeOptions,
): Promise<{ raw: Uint8Array; status: number; contentLength?: number }> {
  const { promise, resolve, reject } = Promise.withResolvers<
    { raw: Uint8Array; status: number; contentLength?: number }
  >();
  const timer = setTimeout(
    () => reject(new Error("no answer in time")),
    options.responseTimeoutMs ?? 30_000,
  );
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Stops reading at once, before anything else: a flowing socket may emit several buffered
  // chunks in one go, and what follows the head (the first frames) must stay in the socket
  // for the pipe to the client.
  const stop = () => {
    clearTimeout(timer);
    backend.off("data", onData);
    backend.off("error", onError);
    backend.off("end", onEnd);
    backend.pause();
  };
  const onData = (chunk: Uint8Array) => {
    chunks.push(chunk);
    size += chunk.length;
    const raw = concat(chunks, size);
    const text = new TextDecoder("latin1").decode(raw);
    const end = text.indexOf(HEAD_END);
    if (end === -1) {
      if (size > MAX_RESPONSE_HEAD) {
        stop();
        reject(new Error("response head too big"));
      }
      return;
    }
    const parsed = parseResponseHead(text.slice(0, end + 2));
    stop();
    if (!parsed) {
      reject(new Error("malformed response"));
      return;
    }
    resolve({ raw, ...parsed });
  };
  const onError = (error: Error) => {
    stop();
    reject(error);
  };
  const onEnd = () => {
    stop();
    reject(new Error("connection closed before an answer"));
  };
  backend.on("data", onData);
  backend.once("error", onError);
  backend.once("end", onEnd);
  backend.once("connect", () => {
    backend.write(upstreamRequestHead(request, target));
    if (head.length > 0) backend.write(head);
  });
  return promise.finally(stop);
}

/** Relays a non-101 answer (head and `Content-Length` body, or until the end) and closes. */
async function relayAndClose(
  backend: Socket,
  client: Duplex,
  answer: { raw: Uint8Array; contentLength?: number },
): Promise<void> {
  const text = new TextDecoder("latin1").decode(answer.raw);
  const bodyStart = text.indexOf(HEAD_END) + HEAD_END.length;
  let remaining = answer.contentLength === undefined
    ? Infinity
    : answer.contentLength - (answer.raw.length - bodyStart);
  client.write(answer.raw);
  if (remaining > 0) {
    const timer = setTimeout(() => backend.destroy(), 5_000);
    await new Promise<void>((resolve) => {
      backend.on("data", (chunk: Uint8Array) => {
        client.write(chunk.subarray(0, Math.max(0, remaining)));
        remaining -= chunk.length;
        if (remaining <= 0) resolve();
      });
      backend.once("close", () => resolve());
      backend.resume();
    });
    clearTimeout(timer);
  }
  backend.destroy();
  client.end();
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
