/**
 * The streaming endpoints (upstream `getExec`, `getAttach`, `getPortForward` and `getRun` in
 * pkg/kubelet/server/server.go):
 *
 * - `/exec/{ns}/{pod}[/{uid}]/{container}?command=…&input=1&output=1&error=1&tty=1`,
 *   `/attach/{ns}/{pod}[/{uid}]/{container}` and `/portForward/{ns}/{pod}[/{uid}]` ask the
 *   runtime for a streaming URL (CRI `Exec`, `Attach`, `PortForward`) and answer with an
 *   {@linkcode upgradeResponse} so the transport proxies the client's upgrade there;
 * - `POST /run/{ns}/{pod}[/{uid}]/{container}?cmd=…` runs the command with CRI `ExecSync`
 *   and answers with its output.
 *
 * A request that is not an upgrade is refused before the runtime is asked (upstream asks
 * first and refuses in the proxy), so no exec session is left waiting for a client.
 *
 * @module
 */

import { HttpError } from "../http_error.ts";
import type { HttpRequest, RequestHeaders } from "../http_request.ts";
import { isUpgradeRequest, upgradeResponse } from "../upgrade.ts";
import type { Route } from "./healthz.ts";

/** A pod, and optionally its UID, as the path names it. */
export interface PodTarget {
  namespace: string;
  pod: string;
  /** Set by the `/{uid}/` form of the path; must match the pod's UID. */
  uid?: string;
}

/** A container of a pod, as the path names it. */
export interface ContainerTarget extends PodTarget {
  container: string;
}

/** Which streams a session carries (upstream `remotecommand` options). */
export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/**
 * What the streaming routes ask of the kubelet. Methods throw an {@linkcode HttpError} for an
 * unknown pod or container; the URLs are the runtime's streaming URLs.
 */
export interface StreamingHost {
  exec(
    target: ContainerTarget,
    command: readonly string[],
    options: StreamOptions,
  ): Promise<string>;
  attach(target: ContainerTarget, options: StreamOptions): Promise<string>;
  portForward(target: PodTarget, ports: readonly number[]): Promise<string>;
  /** The combined stdout and stderr of a command that exited 0. */
  run(target: ContainerTarget, command: readonly string[]): Promise<Uint8Array>;
}

/** The parameters after the endpoint's prefix: `{ns}/{pod}[/{uid}]/{container}`. */
export function parseContainerTarget(rest: string): ContainerTarget {
  const parts = rest.split("/");
  if (parts.some((p) => p === "")) throw notFound();
  if (parts.length === 3) {
    return { namespace: parts[0]!, pod: parts[1]!, container: parts[2]! };
  }
  if (parts.length === 4) {
    return {
      namespace: parts[0]!,
      pod: parts[1]!,
      uid: parts[2]!,
      container: parts[3]!,
    };
  }
  throw notFound();
}

/** The parameters after `/portForward/`: `{ns}/{pod}[/{uid}]`. */
export function parsePodTarget(rest: string): PodTarget {
  const parts = rest.split("/");
  if (parts.some((p) => p === "")) throw notFound();
  if (parts.length === 2) return { namespace: parts[0]!, pod: parts[1]! };
  if (parts.length === 3) {
    return { namespace: parts[0]!, pod: parts[1]!, uid: parts[2]! };
  }
  throw notFound();
}

function notFound(): HttpError {
  return new HttpError(404, "404 page not found");
}

/**
 * The streams of an exec or attach (upstream `remotecommand` `NewOptions`): the API server
 * names them `input`, `output`, `error` and `tty`, and only `1` turns one on; a TTY has no
 * separate stderr. @throws {HttpError} 400 when none is asked for.
 */
export function parseStreamOptions(params: URLSearchParams): StreamOptions {
  const on = (name: string) => params.get(name) === "1";
  const tty = on("tty");
  const options = {
    stdin: on("input"),
    stdout: on("output"),
    stderr: on("error") && !tty,
    tty,
  };
  if (!options.stdin && !options.stdout && !options.stderr) {
    throw new HttpError(
      400,
      "you must specify at least 1 of stdin, stdout, stderr",
    );
  }
  return options;
}

/**
 * The ports of a port-forward (upstream `portforward.NewV4Options`): only a WebSocket client
 * names them in the query (`port=80&port=8080` or `port=80,8080`); SPDY clients name them
 * per stream. @throws {HttpError} 400 for a missing, empty or invalid port.
 */
export function parseForwardPorts(
  params: URLSearchParams,
  websocket: boolean,
): number[] {
  if (!websocket) return [];
  const values = params.getAll("port");
  if (values.length === 0) {
    throw new HttpError(400, `query parameter "port" is required`);
  }
  const ports: number[] = [];
  for (const value of values) {
    if (value === "") {
      throw new HttpError(400, `query parameter "port" cannot be empty`);
    }
    for (const part of value.split(",")) {
      const port = /^\d{1,5}$/.test(part) ? Number(part) : NaN;
      if (!(port >= 1 && port <= 65535)) {
        throw new HttpError(
          400,
          `unable to parse "${value}" as a port: ports are 1-65535`,
        );
      }
      ports.push(port);
    }
  }
  return ports;
}

function isWebSocket(headers: RequestHeaders): boolean {
  return (headers.get("upgrade") ?? "").toLowerCase() === "websocket";
}

function requireUpgrade(request: HttpRequest): void {
  if (!isUpgradeRequest(request.headers)) {
    throw new HttpError(
      400,
      "Upgrade request required: exec, attach and port-forward speak SPDY/3.1 or WebSocket (X-Stream-Protocol-Version or Sec-WebSocket-Protocol v4/v5.channel.k8s.io)",
    );
  }
}

function streamUrl(url: string): URL {
  try {
    return new URL(url);
  } catch (cause) {
    throw new HttpError(
      500,
      `the container runtime returned an invalid streaming URL "${url}"`,
      { cause },
    );
  }
}

/** `/exec/` (prefix included in `prefix`). */
export function execRoute(host: StreamingHost, prefix: string): Route {
  return async (request, url) => {
    const target = parseContainerTarget(url.pathname.slice(prefix.length));
    const options = parseStreamOptions(url.searchParams);
    requireUpgrade(request);
    const command = url.searchParams.getAll("command");
    return upgradeResponse(
      streamUrl(await host.exec(target, command, options)),
    );
  };
}

/** `/attach/`. */
export function attachRoute(host: StreamingHost, prefix: string): Route {
  return async (request, url) => {
    const target = parseContainerTarget(url.pathname.slice(prefix.length));
    const options = parseStreamOptions(url.searchParams);
    requireUpgrade(request);
    return upgradeResponse(streamUrl(await host.attach(target, options)));
  };
}

/** `/portForward/`. */
export function portForwardRoute(host: StreamingHost, prefix: string): Route {
  return async (request, url) => {
    const target = parsePodTarget(url.pathname.slice(prefix.length));
    const ports = parseForwardPorts(
      url.searchParams,
      isWebSocket(request.headers),
    );
    requireUpgrade(request);
    return upgradeResponse(streamUrl(await host.portForward(target, ports)));
  };
}

/** `POST /run/`: the command is `cmd`, split on spaces, as upstream. */
export function runRoute(host: StreamingHost, prefix: string): Route {
  return async (_request, url) => {
    const target = parseContainerTarget(url.pathname.slice(prefix.length));
    const command = (url.searchParams.get("cmd") ?? "").split(" ");
    const output = await host.run(target, command);
    return new Response(new Uint8Array(output), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  };
}
