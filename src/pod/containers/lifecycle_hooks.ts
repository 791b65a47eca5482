/**
 * Container lifecycle hooks, postStart and preStop (upstream pkg/kubelet/lifecycle/handlers.go):
 * `exec` through CRI `ExecSync`, `httpGet` as one GET to the pod IP (or `host`), `sleep` on the
 * injected clock. A `tcpSocket` handler is kept by the API for compatibility only and fails at
 * run time, as upstream. Only transport errors fail an HTTP hook: the response status is not
 * looked at.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { RuntimeService } from "../../runtime/mod.ts";
import { resolveProbePort } from "../probes/probe_handlers.ts";
import { getFollowingRedirects, podFetch } from "../probes/pod_http.ts";
import type { Container, LifecycleHandler, Pod } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Dependencies of {@linkcode runLifecycleHook}. */
export interface HookDeps {
  runtime: RuntimeService;
  clock: Clock;
  logger: Logger;
  /** For `httpGet` hooks (default {@linkcode podFetch}: HTTPS without certificate checks). */
  fetch?: typeof fetch;
}

/** Options of {@linkcode runLifecycleHook}. */
export interface HookOptions {
  /** Upper bound in seconds (0 = none). */
  timeoutSeconds: number;
  signal?: AbortSignal;
}

/** What a hook runs against. */
export interface HookTarget {
  pod: Pod;
  containerName: string;
  containerId: string;
  handler: LifecycleHandler;
}

/** User-Agent of hook requests (`kube-lifecycle/<major>.<minor>` of the kubelet we mirror). */
const LIFECYCLE_USER_AGENT = "kube-lifecycle/1.34";
const POD_UID_LABEL = "io.kubernetes.pod.uid";
const SANDBOX_READY = 0;
const DECODER = new TextDecoder();

function podRef(pod: Pod): string {
  const m = pod.metadata;
  return `${m.name}_${m.namespace}(${m.uid})`;
}

/**
 * Runs one hook handler against a running container. Resolves to upstream's failure message
 * when the hook failed, or undefined on success. Rejects only when `options.signal` aborts.
 */
export async function runLifecycleHook(
  deps: HookDeps,
  target: HookTarget,
  options: HookOptions,
): Promise<string | undefined> {
  const { pod, containerName, handler } = target;
  const who = `for Container "${containerName}" in Pod "${podRef(pod)}"`;
  if (handler.exec) return await execHook(deps, target, options, who);
  if (handler.httpGet) {
    try {
      await httpHook(deps, target, options);
      return undefined;
    } catch (error) {
      options.signal?.throwIfAborted();
      return `HTTP lifecycle hook (${
        handler.httpGet.path ?? ""
      }) ${who} failed - error: ${errorMessage(error)}`;
    }
  }
  if (handler.sleep) {
    let ms = Math.max(0, handler.sleep.seconds) * 1000;
    if (options.timeoutSeconds > 0) {
      ms = Math.min(ms, options.timeoutSeconds * 1000);
    }
    await deps.clock.sleep(ms, options.signal);
    return undefined;
  }
  // tcpSocket (deprecated, never run) or no handler at all
  const message = `Cannot run handler: invalid handler: ${
    JSON.stringify(handler)
  }`;
  deps.logger.warn("Cannot run handler", {
    pod: podRef(pod),
    container: containerName,
    err: message,
  });
  return message;
}

async function execHook(
  deps: HookDeps,
  target: HookTarget,
  options: HookOptions,
  who: string,
): Promise<string | undefined> {
  const cmd = target.handler.exec?.command ?? [];
  const shown = `[${cmd.join(" ")}]`;
  try {
    const res = await deps.runtime.execSync(
      {
        containerId: target.containerId,
        cmd,
        timeout: BigInt(options.timeoutSeconds),
      },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.timeoutSeconds > 0
          ? { timeoutMs: options.timeoutSeconds * 1000 + 5_000 }
          : {}),
      },
    );
    if (res.exitCode === 0) return undefined;
    const stderr = DECODER.decode(res.stderr);
    const output = DECODER.decode(res.stdout) + stderr;
    // upstream: the exec error names the exit code and stderr, the message is all output
    return `Exec lifecycle hook (${shown}) ${who} failed - error: command '${
      cmd.join(" ")
    }' exited with ${res.exitCode}: ${stderr}, message: ${
      JSON.stringify(output)
    }`;
  } catch (error) {
    options.signal?.throwIfAborted();
    return `Exec lifecycle hook (${shown}) ${who} failed - error: ${
      errorMessage(error)
    }, message: ""`;
  }
}

/**
 * The pod's IP as the runtime reports it for its newest ready sandbox (upstream reads the
 * runtime pod status). A host-network sandbox has none: the node's loopback reaches the same
 * listeners.
 */
async function podIP(
  runtime: RuntimeService,
  pod: Pod,
  signal: AbortSignal | undefined,
): Promise<string> {
  const call = signal ? { signal } : {};
  const sandboxes = await runtime.listPodSandbox({
    filter: { labelSelector: { [POD_UID_LABEL]: pod.metadata.uid ?? "" } },
  }, call);
  const ready = sandboxes.items
    .filter((s) => s.state === SANDBOX_READY)
    .sort((a, b) => Number(b.createdAt - a.createdAt))[0];
  if (ready) {
    const res = await runtime.podSandboxStatus(
      { podSandboxId: ready.id },
      call,
    );
    const ip = res.status?.network?.ip;
    if (ip) return ip;
  }
  if (pod.spec.hostNetwork) return "127.0.0.1";
  throw new Error(
    `failed to find networking container: pod "${podRef(pod)}" has no IP`,
  );
}

function findContainer(pod: Pod, name: string): Container {
  return [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find(
    (c) => c.name === name,
  ) ?? { name };
}

async function httpHook(
  deps: HookDeps,
  target: HookTarget,
  options: HookOptions,
): Promise<void> {
  const action = target.handler.httpGet!;
  const host = action.host ||
    await podIP(deps.runtime, target.pod, options.signal);
  const { url, headers } = httpGetRequest(target, host);
  const doFetch = deps.fetch ?? podFetch;
  const timeout = options.timeoutSeconds > 0
    ? AbortSignal.timeout(options.timeoutSeconds * 1000)
    : undefined;
  const signals = [options.signal, timeout].filter((s) => s !== undefined);
  const signal = signals.length ? AbortSignal.any(signals) : undefined;
  // same-host redirects are followed and others returned, as for probes
  const get = async (u: string, h: Headers) => {
    const { response } = await getFollowingRedirects(doFetch, u, h, signal);
    await response.body?.cancel();
  };
  try {
    await get(url, headers);
  } catch (error) {
    if (!url.startsWith("https:") || !isPlainHttpAnswer(error)) throw error;
    // upstream retries an HTTPS hook that got a plain HTTP answer over HTTP, without
    // credentials
    const plain = new Headers(headers);
    plain.delete("Authorization");
    await get(url.replace(/^https:/, "http:"), plain);
    deps.logger.warn(
      "HTTPS lifecycle hook got an HTTP response; retried with HTTP",
      { pod: podRef(target.pod), url },
    );
  }
}

/** The URL and headers of an `httpGet` hook (upstream `NewRequestForHTTPGetAction`). */
export function httpGetRequest(
  target: HookTarget,
  host: string,
): { url: string; headers: Headers } {
  const action = target.handler.httpGet!;
  const container = findContainer(target.pod, target.containerName);
  const port = resolveProbePort(action.port, container);
  const scheme = (action.scheme ?? "HTTP").toLowerCase();
  let path = action.path ?? "";
  if (!path.startsWith("/")) path = `/${path}`;
  const urlHost = host.includes(":") && !host.startsWith("[")
    ? `[${host}]`
    : host;
  const headers = new Headers({
    "User-Agent": LIFECYCLE_USER_AGENT,
    "Accept": "*/*",
  });
  for (const h of action.httpHeaders ?? []) headers.set(h.name, h.value);
  return { url: `${scheme}://${urlHost}:${port}${path}`, headers };
}

function isPlainHttpAnswer(error: unknown): boolean {
  let e: unknown = error;
  for (let i = 0; i < 4 && e instanceof Error; i++) {
    if (
      /InvalidContentType|corrupt message|wrong version number/i.test(e.message)
    ) {
      return true;
    }
    e = e.cause;
  }
  return false;
}
