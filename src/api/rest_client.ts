/**
 * A minimal JSON REST client for the API server over Deno's `fetch`, with the TLS client
 * identity in a `Deno.HttpClient` (CA bundle, client certificate and key), a bearer token or
 * an exec plugin's credential, a per-request timeout and the client-side rate limit. Failure answers become
 * {@linkcode ApiStatusError}s carrying the `metav1.Status` reason.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import { apiStatusError } from "./errors.ts";
import type { Connection } from "./kubeconfig.ts";
import { TokenBucket } from "./token_bucket.ts";

/** One request. */
export interface RestRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path under the server, e.g. `/api/v1/nodes/n1`. */
  path: string;
  body?: unknown;
  /** Request content type (default `application/json`). */
  contentType?: string;
  signal?: AbortSignal;
}

/** Sends requests to one API server as one identity (replaceable by `reconnect`). */
export interface RestClient extends Disposable {
  /** The parsed JSON answer; rejects with ApiStatusError on a failure status. */
  request<T>(request: RestRequest): Promise<T>;
  /**
   * A streaming GET (a watch): yields each newline-delimited JSON object of the answer until
   * the server ends it or `request.signal` aborts. No per-request timeout applies; the caller
   * bounds it (e.g. `timeoutSeconds`). Rejects with ApiStatusError on a failure status.
   */
  stream(request: Omit<RestRequest, "method" | "body">): AsyncIterable<unknown>;
  /**
   * Sends later requests with `connection`'s identity (a rotated client certificate).
   * Requests in flight finish on the old HTTP client, which is closed after them.
   */
  reconnect(connection: Connection): void;
  /** Releases the HTTP client. Safe to call twice. */
  close(): void;
}

/** Options of {@linkcode createRestClient}. */
export interface RestClientOptions {
  /** `kubeAPIQPS` (0 or less: no limit). */
  qps?: number;
  /** `kubeAPIBurst`. */
  burst?: number;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
  /** Sent as User-Agent. */
  userAgent?: string;
  /** For tests; default the global fetch. */
  fetch?: typeof fetch;
}

/** Builds a client for `connection`. */
export function createRestClient(
  deps: { clock: Clock },
  connection: Connection,
  options: RestClientOptions = {},
): RestClient {
  interface Transport {
    connection: Connection;
    http: Deno.HttpClient | undefined;
    inflight: number;
    retired: boolean;
  }
  const open = (conn: Connection): Transport => ({
    connection: conn,
    http: conn.caPem || conn.certPem
      ? Deno.createHttpClient({
        ...(conn.caPem ? { caCerts: [conn.caPem] } : {}),
        ...(conn.certPem && conn.keyPem
          ? { cert: conn.certPem, key: conn.keyPem }
          : {}),
      })
      : undefined,
    inflight: 0,
    retired: false,
  });
  const retire = (t: Transport) => {
    t.retired = true;
    if (t.inflight === 0) t.http?.close();
  };
  let current = open(connection);
  const bucket = new TokenBucket(deps, {
    qps: options.qps ?? 50,
    burst: options.burst ?? 100,
  });
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    retire(current);
  };
  /**
   * Sends one request on the current transport. `read` consumes a successful body before the
   * transport may be released (a stream's body is read later, by its consumer).
   */
  const send = async (
    req: RestRequest,
    signal: AbortSignal | undefined,
    read: (res: Response) => Promise<string>,
  ): Promise<{ res: Response; text: string }> => {
    await bucket.take(req.signal);
    const headers: Record<string, string> = {
      "Accept": "application/json",
      "User-Agent": options.userAgent ?? "kubelet.ts",
    };
    // An exec plugin's credential may change between requests: a new certificate needs an
    // HTTP client of its own, a token only a header
    const exec = current.connection.exec;
    const cred = exec ? await exec.get() : undefined;
    if (
      cred?.certPem && cred.certPem !== current.connection.certPem && !closed
    ) {
      const old = current;
      current = open({
        ...old.connection,
        certPem: cred.certPem,
        ...(cred.keyPem ? { keyPem: cred.keyPem } : {}),
      });
      retire(old);
    }
    const transport = current;
    const conn = transport.connection;
    const token = cred?.token ?? conn.token;
    if (token) headers["Authorization"] = `Bearer ${token}`;
    if (req.body !== undefined) {
      headers["Content-Type"] = req.contentType ?? "application/json";
    }
    const init: RequestInit & { client?: Deno.HttpClient } = {
      method: req.method,
      headers,
      ...(signal ? { signal } : {}),
      ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
      ...(transport.http ? { client: transport.http } : {}),
    };
    transport.inflight++;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${conn.server}${req.path}`, init);
      text = res.ok ? await read(res) : await res.text();
    } finally {
      transport.inflight--;
      if (transport.retired && transport.inflight === 0) {
        transport.http?.close();
      }
    }
    if (res.status === 401 && exec && cred) exec.unauthorized(cred);
    if (!res.ok) {
      let status: { message?: string; reason?: string } = {};
      try {
        status = JSON.parse(text);
      } catch {
        // Not a metav1.Status: keep the raw text as the message.
      }
      throw apiStatusError(
        `${req.method} ${req.path} failed with ${res.status}: ${
          status.message ?? text.trim()
        }`,
        {
          code: res.status,
          ...(status.reason ? { reason: status.reason } : {}),
          statusMessage: status.message ?? text.trim(),
        },
      );
    }
    return { res, text };
  };
  return {
    async request<T>(req: RestRequest): Promise<T> {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = req.signal
        ? AbortSignal.any([req.signal, timeout])
        : timeout;
      const { text } = await send(req, signal, (r) => r.text());
      return (text ? JSON.parse(text) : undefined) as T;
    },
    async *stream(req) {
      const { res } = await send(
        { ...req, method: "GET" },
        req.signal,
        () => Promise.resolve(""),
      );
      if (!res.body) return;
      const reader = res.body.pipeThrough(new TextDecoderStream())
        .getReader();
      let buffered = "";
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffered += value;
          let nl: number;
          while ((nl = buffered.indexOf("\n")) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line) yield JSON.parse(line);
          }
        }
        if (buffered.trim()) yield JSON.parse(buffered);
      } finally {
        await reader.cancel().catch(() => {});
      }
    },
    reconnect(next: Connection) {
      if (closed) return;
      const old = current;
      current = open(next);
      retire(old);
    },
    close,
    [Symbol.dispose]: close,
  };
}
