/**
 * One probe attempt (upstream `pkg/kubelet/prober/prober.go` + `pkg/probe/{exec,http,tcp}`):
 * runs the probe's handler once against a running container and classifies the outcome.
 *
 * - `success` / `failure` count towards the probe's thresholds. Timeouts and refused
 *   connections are failures, as upstream.
 * - `unknown` is thrown away by the worker: the probe could not be run for a reason that says
 *   nothing about the container (a missing Deno permission, an unresolvable named port, a
 *   runtime error other than a timeout).
 *   `warning` then names what an operator can do.
 *
 * `httpGet` goes through the pod HTTP client ({@link ./pod_http.ts}; HTTPS without
 * certificate checks, as upstream). gRPC probes call `grpc.health.v1.Health/Check` over h2c
 * ({@link ./probe_grpc.ts}).
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import {
  isDeadlineExceeded,
  RuntimeError,
  type RuntimeService,
} from "../../runtime/mod.ts";
import type { Container, Pod, PodStatus, Probe } from "../types.ts";
import type { ProbeResult } from "./probe_results.ts";
import {
  encodeHealthCheckRequest,
  HEALTH_CHECK_PATH,
  healthCheckOutcome,
} from "./probe_grpc.ts";
import {
  BODY_LIMIT,
  getFollowingRedirects,
  podFetch,
  readPrefix,
} from "./pod_http.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Opens a TCP connection (default `Deno.connect`); the probe closes it right away. */
export type ProbeConnect = (
  options: { hostname: string; port: number },
) => Promise<{ close(): void }>;

/** Effects a probe attempt may use. */
export interface ProbeHandlerDeps {
  runtime: Pick<RuntimeService, "execSync">;
  clock: Clock;
  fetch?: typeof fetch;
  connect?: ProbeConnect;
  /**
   * `fetch` for gRPC probes; it must speak HTTP/2 with prior knowledge (default: a fresh h2c
   * `Deno.createHttpClient` per probe, closed afterwards, as upstream dials per probe).
   */
  grpcFetch?: typeof fetch;
}

/** What a probe attempt ran against. */
export interface ProbeTarget {
  pod: Pod;
  /** The pod's current status (for the pod IP). */
  status: PodStatus;
  container: Container;
  /** Runtime container id (without the `containerd://` prefix). */
  containerId: string;
}

/** Outcome of one probe attempt. */
export interface ProbeOutcome {
  result: ProbeResult;
  /** Handler output or error text (for the "Probe failed" log). */
  output: string;
  /** Set with `unknown` when an operator can fix the cause (e.g. a permission grant). */
  warning?: string;
  /**
   * Set with `success` where upstream's probe answers `probe.Warning` (an HTTP redirect
   * not followed): the worker records `output` in a `ProbeWarning` event.
   */
  probeWarning?: true;
}

/** Version in the probe User-Agent (`kube-probe/<major>.<minor>`), as the kubelet we mirror. */
const PROBE_USER_AGENT = "kube-probe/1.34";
const MAX_OUTPUT = BODY_LIMIT;

class ProbeTimeoutError extends Error {
  constructor(ms: number) {
    super(`Probe timed out after ${ms / 1000}s`);
    this.name = "ProbeTimeoutError";
  }
}

/** Runs `probe`'s handler once; never rejects except when `signal` aborts. */
export async function runProbe(
  probe: Probe,
  target: ProbeTarget,
  deps: ProbeHandlerDeps & { signal: AbortSignal },
): Promise<ProbeOutcome> {
  const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
  try {
    if (probe.exec) return await execProbe(probe, target, deps, timeoutMs);
    if (probe.httpGet) return await httpProbe(probe, target, deps, timeoutMs);
    if (probe.tcpSocket) return await tcpProbe(probe, target, deps, timeoutMs);
    if (probe.grpc) return await grpcProbe(probe, target, deps, timeoutMs);
    return { result: "unknown", output: "Probe has no handler" };
  } catch (error) {
    if (deps.signal.aborted) throw error;
    return classifyError(error);
  }
}

function classifyError(error: unknown): ProbeOutcome {
  const output = errorMessage(error);
  if (error instanceof Deno.errors.NotCapable) {
    return {
      result: "unknown",
      output,
      warning: `Probe needs a Deno permission: ${
        grantFor(output) ?? "grant --allow-net for the probe target"
      } (build with podCIDR/--pod-cidr set to the pod network to grant all pod IPs)`,
    };
  }
  if (error instanceof ProbeTimeoutError || isDeadlineExceeded(error)) {
    return { result: "failure", output };
  }
  if (error instanceof RangeError) {
    // a named port that does not resolve: a configuration problem, not a container failure
    return { result: "unknown", output };
  }
  if (error instanceof RuntimeError) {
    // the runtime could not run the command (e.g. executable not found): upstream "Probe errored"
    return { result: "unknown", output };
  }
  return { result: "failure", output };
}

/** The `--allow-net=host:port` grant a NotCapable message asks for, if it names one. */
function grantFor(message: string): string | undefined {
  const match = /net access to "([^"]+)"/.exec(message);
  return match ? `--allow-net=${match[1]}` : undefined;
}

async function withTimeout<T>(
  deps: { clock: Clock; signal: AbortSignal },
  timeoutMs: number,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const stopTimer = new AbortController();
  const onAbort = () => controller.abort(deps.signal.reason);
  deps.signal.addEventListener("abort", onAbort, { once: true });
  const timer = deps.clock.sleep(timeoutMs, stopTimer.signal).then(() => {
    controller.abort(new ProbeTimeoutError(timeoutMs));
  }, () => {});
  try {
    const work = run(controller.signal);
    const timedOut = new Promise<never>((_, reject) => {
      const fail = () => reject(controller.signal.reason);
      if (controller.signal.aborted) fail();
      else controller.signal.addEventListener("abort", fail, { once: true });
    });
    return await Promise.race([work, timedOut]);
  } finally {
    stopTimer.abort();
    deps.signal.removeEventListener("abort", onAbort);
    await timer;
  }
}

async function execProbe(
  probe: Probe,
  target: ProbeTarget,
  deps: ProbeHandlerDeps & { signal: AbortSignal },
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const response = await deps.runtime.execSync({
    containerId: target.containerId,
    cmd: probe.exec?.command ?? [],
    timeout: BigInt(timeoutMs / 1000),
  }, { signal: deps.signal });
  const decoder = new TextDecoder();
  const output = (decoder.decode(response.stdout) +
    decoder.decode(response.stderr)).slice(0, MAX_OUTPUT);
  return { result: response.exitCode === 0 ? "success" : "failure", output };
}

/** A port as a number: numbers as is, names through the container's ports. */
export function resolveProbePort(
  port: number | string,
  container: Container,
): number {
  if (typeof port === "number") return port;
  if (/^\d+$/.test(port)) return Number(port);
  const found = container.ports?.find((p) => p.name === port);
  if (!found) {
    throw new RangeError(
      `Cannot resolve port "${port}": container "${container.name}" has no port with that name`,
    );
  }
  return found.containerPort;
}

function probeHost(host: string | undefined, target: ProbeTarget): string {
  if (host) return host;
  if (target.status.podIP) return target.status.podIP;
  if (target.pod.spec.hostNetwork) {
    // a host-network pod's IP is the node address; without a known one the node's loopback
    // reaches the same listeners
    return target.status.hostIP ?? "127.0.0.1";
  }
  throw new RangeError("Cannot probe: the pod has no IP yet");
}

function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

async function httpProbe(
  probe: Probe,
  target: ProbeTarget,
  deps: ProbeHandlerDeps & { signal: AbortSignal },
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const action = probe.httpGet!;
  const port = resolveProbePort(action.port, target.container);
  const host = probeHost(action.host, target);
  const scheme = (action.scheme ?? "HTTP").toLowerCase();
  let path = action.path ?? "";
  if (!path.startsWith("/")) path = `/${path}`;
  const url = `${scheme}://${urlHost(host)}:${port}${path}`;
  const headers = new Headers({
    "User-Agent": PROBE_USER_AGENT,
    "Accept": "*/*",
  });
  for (const h of action.httpHeaders ?? []) headers.set(h.name, h.value);
  const doFetch = deps.fetch ?? podFetch;
  return await withTimeout(deps, timeoutMs, async (signal) => {
    const { response, url: current } = await getFollowingRedirects(
      doFetch,
      url,
      headers,
      signal,
    );
    const status = response.status;
    if (status >= 300 && status < 400) {
      // upstream DoHTTPProbe: a redirect the client did not follow (another host, no
      // Location) is probe.Warning, which counts as success and carries the body
      const body = await readPrefix(response, BODY_LIMIT).catch(() => "");
      return {
        result: "success",
        output: `Probe terminated redirects, Response body: ${body}`,
        probeWarning: true,
      };
    }
    await response.body?.cancel();
    if (status >= 200 && status < 300) {
      return {
        result: "success",
        output: `HTTP probe ${current}: status ${status}`,
      };
    }
    // upstream DoHTTPProbe: the user-facing text never holds the response body
    return {
      result: "failure",
      output: `HTTP probe failed with statuscode: ${status}`,
    };
  });
}

async function tcpProbe(
  probe: Probe,
  target: ProbeTarget,
  deps: ProbeHandlerDeps & { signal: AbortSignal },
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const action = probe.tcpSocket!;
  const port = resolveProbePort(action.port, target.container);
  const hostname = probeHost(action.host, target);
  const connect: ProbeConnect = deps.connect ??
    ((o) => Deno.connect({ ...o, transport: "tcp" }));
  const attempt = connect({ hostname, port });
  try {
    const conn = await withTimeout(deps, timeoutMs, () => attempt);
    conn.close();
  } catch (error) {
    // a connection that completes after the timeout is closed, not leaked
    attempt.then((c) => c.close(), () => {});
    throw error;
  }
  return { result: "success", output: `TCP probe ${hostname}:${port}: open` };
}

async function grpcProbe(
  probe: Probe,
  target: ProbeTarget,
  deps: ProbeHandlerDeps & { signal: AbortSignal },
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const action = probe.grpc!;
  const host = urlHost(probeHost(undefined, target));
  const address = `${host}:${action.port}`;
  let client: Deno.HttpClient | undefined;
  const doFetch: typeof fetch = deps.grpcFetch ?? ((input, init) => {
    client ??= Deno.createHttpClient({ http1: false, http2: true });
    return fetch(input, { ...init, client });
  });
  try {
    return await withTimeout(deps, timeoutMs, async (signal) => {
      const response = await doFetch(`http://${address}${HEALTH_CHECK_PATH}`, {
        method: "POST",
        headers: {
          "content-type": "application/grpc",
          "te": "trailers",
          "grpc-timeout": `${timeoutMs}m`,
          "user-agent": PROBE_USER_AGENT,
        },
        body: encodeHealthCheckRequest(action.service ?? ""),
        signal,
      });
      return await healthCheckOutcome(response, address);
    });
  } finally {
    client?.close();
  }
}
