/**
 * What the kubelet's HTTP handlers read of a request. A fetch `Request` has all of it; the
 * node:http listeners hand over a lighter object, since building a `Request` (its URL parsed
 * twice, every header copied through WebIDL) cost about a third of a `/healthz` answer.
 *
 * @module
 */

/** An HTTP request as the handlers see it (no body: no route reads one). */
export interface HttpRequest {
  readonly method: string;
  /** The absolute URL. */
  readonly url: string;
  readonly headers: RequestHeaders;
}

/** A request's headers, looked up by name in any case; repeated values joined by ", ". */
export interface RequestHeaders {
  get(name: string): string | null;
}
