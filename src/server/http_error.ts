/**
 * The server's one error type and its mapping to a response: route code throws
 * {@linkcode HttpError}; anything else becomes a plain 500 in `handler.ts`.
 *
 * @module
 */

import { fixedResponse } from "./fixed_body.ts";

/** Options of {@linkcode HttpError}. */
export interface HttpErrorOptions extends ErrorOptions {
  /** Extra response headers (e.g. `Allow` on a 405). */
  headers?: Record<string, string>;
}

/** An error that carries the HTTP status it answers with. */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, options: HttpErrorOptions = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = "HttpError";
    this.status = status;
    this.headers = options.headers ?? {};
  }

  /** The plain-text response Go's `http.Error` would write: the message and a newline. */
  toResponse(): Response {
    return textResponse(this.status, `${this.message}\n`, this.headers);
  }
}

/** A `text/plain; charset=utf-8` response with `X-Content-Type-Options: nosniff`. */
export function textResponse(
  status: number,
  body: string,
  headers: Record<string, string> = {},
): Response {
  return fixedResponse(status, encoder.encode(body), {
    "content-type": "text/plain; charset=utf-8",
    "x-content-type-options": "nosniff",
    ...headers,
  });
}

const encoder = new TextEncoder();
