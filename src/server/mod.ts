/**
 * The kubelet's HTTP listeners: the healthz listener (127.0.0.1:10248 by default, plain HTTP,
 * only the `/healthz` routes, no authentication) and the kubelet API (HTTPS on
 * `address:port`, default 0.0.0.0:10250, with x509/TokenReview authentication and
 * AlwaysAllow/SubjectAccessReview authorization; plus the read-only port when configured).
 *
 * This folder owns the only plain HTTP listener (`serve.ts`, node:http for its header limits)
 * and the only HTTPS listener (`tls_serve.ts`, node:https because it must request client
 * certificates). It must not
 * install debugging, log or pod handlers on an unauthenticated listener (CVE-2019-11248) and
 * must not read global time (use the injected `Clock`).
 *
 * @module
 */

/** `createHandler(host)`: the healthz handler as a plain `(HttpRequest) => Promise<Response>`. */
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
/** `serve(handler, options)`: the one plain HTTP listener; bind failures are `ListenError`s. */
export { joinHostPort, ListenError, serve } from "./serve.ts";
export type { ListenerFields, ServeOptions } from "./serve.ts";
/** `runHealthzServer(host, options)`: the healthz listener; logs bind failures and retries every 5 s. */
export { runHealthzServer } from "./healthz_server.ts";
export type { HealthzServerOptions } from "./healthz_server.ts";
/** The kubelet API: `runApiServer(host, options)` and its parts. */
export { API_RETRY_MS, buildApiAuth, runApiServer } from "./api_server.ts";
export type { ApiServerConfig, ApiServerOptions } from "./api_server.ts";
/** `createApiHandler(host, options)`: canonical path → authenticate → authorize → route. */
export { createApiHandler } from "./api_handler.ts";
export type {
  ApiAuth,
  ApiHandler,
  ApiHandlerOptions,
  ApiServerHost,
  RequestInfo,
} from "./api_handler.ts";
export type { PodsHost, RuntimePod } from "./routes/pods.ts";
export type {
  ContainerResourceStats,
  ResourceStats,
} from "./routes/resource_metrics.ts";
/** `/metrics/cadvisor`: one cgroup's figures. */
export type { CadvisorContainer } from "./routes/cadvisor_metrics.ts";
/** `/containerLogs/{ns}/{pod}/{container}`: what it reads from the kubelet. */
export type {
  ContainerLogsHost,
  ContainerRef,
  LogTarget,
  PodLogOptions,
} from "./routes/container_logs.ts";
/** `/exec`, `/attach`, `/portForward`, `/run`: what they ask of the kubelet. */
export type {
  ContainerTarget,
  PodTarget,
  StreamingHost,
  StreamOptions,
} from "./routes/streaming.ts";
/** `/stats/summary`: the pure conversion from CRI stats and the node's figures. */
export { buildSummary, cpuAndMemoryOnly } from "./stats/summary.ts";
export type {
  CriContainerStats,
  CriPodSandboxStats,
  FsFigures,
  InterfaceCounters,
  RootUsage,
  SummaryInput,
  SystemContainerUsage,
  VolumeUsage,
} from "./stats/summary.ts";
/** `usageNanoCores` from the previous CPU reading of each cgroup or container. */
export {
  CpuRates,
  fillUsageNanoCores,
  usageNanoCores,
} from "./stats/cpu_rate.ts";
/** Authentication, authorization and the path → attributes table. */
export { ANONYMOUS_USER, createAuthenticator } from "./auth/authenticate.ts";
export type {
  Authenticator,
  Credentials,
  UserInfo,
} from "./auth/authenticate.ts";
export { alwaysAllow, createWebhookAuthorizer } from "./auth/authorize.ts";
export type { Authorizer } from "./auth/authorize.ts";
export { canonicalPath, requestAttributes } from "./auth/request_attributes.ts";
export type { RequestAttributes } from "./auth/request_attributes.ts";
export {
  createReloadingReviewClient,
  createReviewClient,
  loadReviewConnection,
} from "./auth/review_client.ts";
export type { ReviewClient, ReviewConnection } from "./auth/review_client.ts";
/** The serving certificate (configured, or self-signed under the cert dir). */
export { loadServingPair, selfSignedFiles } from "./tls/serving_cert.ts";
export { fixedCertificate, serveTls } from "./tls_serve.ts";
export type { CertificateSource, TlsLimits, TlsPair } from "./tls_serve.ts";
