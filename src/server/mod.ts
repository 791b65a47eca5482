/**
 * The kubelet's HTTP listeners. Today only the healthz listener (127.0.0.1:10248 by default):
 * an explicit route table with `/healthz`, `/healthz/ping`, `/healthz/log` and
 * `/healthz/syncloop`, plain HTTP, no authentication.
 *
 * This folder owns the only `Deno.serve` call (`serve.ts`). It must not install debugging,
 * log or pod handlers on an unauthenticated listener (CVE-2019-11248) and must not read
 * global time (use the injected `Clock`).
 *
 * @module
 */

/** `createHandler(host)`: the healthz handler as a plain `(Request) => Promise<Response>`. */
export { createHandler } from "./handler.ts";
export type { ServerHost } from "./handler.ts";
/** An error carrying its HTTP status, and the plain-text response it maps to. */
export { HttpError } from "./http_error.ts";
export type { HttpErrorOptions } from "./http_error.ts";
/** The health checks and the staleness limit of `syncloop`. */
export {
  logCheck,
  pingCheck,
  SYNC_LOOP_MIN_STALE_MS,
  syncLoopCheck,
} from "./routes/healthz.ts";
export type {
  HealthCheck,
  SyncLoopActivity,
  SyncLoopCheckDeps,
} from "./routes/healthz.ts";
/** `serve(handler, options)`: the one `Deno.serve`; bind failures are `ListenError`s. */
export { joinHostPort, ListenError, serve } from "./serve.ts";
export type { ListenerFields, ServeOptions } from "./serve.ts";
/** `runHealthzServer(host, options)`: the healthz listener; logs bind failures and retries every 5 s. */
export { runHealthzServer } from "./healthz_server.ts";
export type { HealthzServerOptions } from "./healthz_server.ts";
