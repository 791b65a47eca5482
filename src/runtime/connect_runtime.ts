/**
 * Kubelet start-up handshake with the container runtime: `Version` must
 * answer CRI API `v1`, and `Status` must report `RuntimeReady`. A missing
 * `NetworkReady` is reported, not fatal (the node just stays NotReady, as
 * upstream).
 *
 * @module
 */

import type { Clock } from "../clock/mod.ts";
import { systemClock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { createCriRuntime, type CriRuntimeOptions } from "./cri_client.ts";
import {
  GrpcCode,
  isUnavailable,
  isUnimplemented,
  RuntimeError,
} from "./errors.ts";
import type { StatusResponse, VersionResponse } from "./gen/api_pb.ts";
import type { CriRuntime, RuntimeService } from "./types.ts";
import { errorMessage } from "../util/error_message.ts";

/** Version string the kubelet sends and expects back in `VersionResponse.version`. */
export const KUBE_RUNTIME_API_VERSION = "0.1.0";
/** Condition type: the runtime can run containers. */
export const RUNTIME_READY = "RuntimeReady";
/** Condition type: pod networking (CNI) is ready. */
export const NETWORK_READY = "NetworkReady";

/** Readiness summary derived from a `StatusResponse`. */
export interface RuntimeReadiness {
  runtimeReady: boolean;
  networkReady: boolean;
  /**
   * Upstream-style problem texts, e.g. `container runtime network not ready:
   * NetworkReady=false reason:NetworkPluginNotReady message:...`. Empty when
   * both conditions are true.
   */
  problems: string[];
}

function describeCondition(
  status: StatusResponse,
  type: string,
): { ok: boolean; text: string } {
  const condition = status.status?.conditions.find((c) => c.type === type);
  if (!condition) return { ok: false, text: `${type} missing` };
  return {
    ok: condition.status,
    text:
      `${type}=${condition.status} reason:${condition.reason} message:${condition.message}`,
  };
}

/** Interprets the `RuntimeReady`/`NetworkReady` conditions of a Status answer. */
export function runtimeReadiness(status: StatusResponse): RuntimeReadiness {
  const problems: string[] = [];
  if (!status.status) {
    return {
      runtimeReady: false,
      networkReady: false,
      problems: ["container runtime status check may not have completed yet"],
    };
  }
  const runtime = describeCondition(status, RUNTIME_READY);
  const network = describeCondition(status, NETWORK_READY);
  if (!runtime.ok) {
    problems.push(`container runtime not ready: ${runtime.text}`);
  }
  if (!network.ok) {
    problems.push(`container runtime network not ready: ${network.text}`);
  }
  return { runtimeReady: runtime.ok, networkReady: network.ok, problems };
}

/**
 * Checks a `Version` answer: CRI API must be `v1` and the kubelet API
 * version `0.1.0`. Throws a RuntimeError (FailedPrecondition) otherwise.
 */
export function checkVersion(version: VersionResponse, endpoint: string): void {
  if (version.runtimeApiVersion !== "v1") {
    throw new RuntimeError(
      GrpcCode.FailedPrecondition,
      `validate CRI v1 runtime API for endpoint "${endpoint}": runtime "${version.runtimeName}" ` +
        `reports API version "${version.runtimeApiVersion}", expected "v1"`,
    );
  }
  if (version.version !== KUBE_RUNTIME_API_VERSION) {
    throw new RuntimeError(
      GrpcCode.FailedPrecondition,
      `validate CRI v1 runtime API for endpoint "${endpoint}": runtime "${version.runtimeName}" ` +
        `speaks kubelet runtime API "${version.version}", expected "${KUBE_RUNTIME_API_VERSION}"`,
    );
  }
}

/** Options for {@link handshake} and {@link connectRuntime}. */
export interface HandshakeOptions {
  /** Keep retrying Unavailable / not-ready answers for this long (default 0: one try). */
  waitMs?: number;
  /** Pause between attempts while waiting (default 1s). */
  retryIntervalMs?: number;
  /** Endpoint text for messages. */
  endpoint?: string;
  signal?: AbortSignal;
  clock?: Clock;
  logger?: Logger;
}

/** Result of a successful handshake. */
export interface HandshakeResult {
  version: VersionResponse;
  status: StatusResponse;
  readiness: RuntimeReadiness;
}

/**
 * Runs the Version + Status handshake on any RuntimeService (real or
 * simulated). Rejects with a RuntimeError whose message names the endpoint:
 * Unimplemented when the runtime does not serve CRI v1, FailedPrecondition
 * for a wrong API version or `RuntimeReady=false`, Unavailable when the
 * socket cannot be reached within `waitMs`.
 */
export async function handshake(
  runtime: RuntimeService,
  options: HandshakeOptions = {},
): Promise<HandshakeResult> {
  const clock = options.clock ?? systemClock;
  const endpoint = options.endpoint ?? "(runtime)";
  const deadline = clock.now() + (options.waitMs ?? 0);
  const interval = options.retryIntervalMs ?? 1000;
  const callOptions = options.signal ? { signal: options.signal } : {};
  for (let attempt = 1;; attempt++) {
    try {
      const version = await runtime.version(
        { version: KUBE_RUNTIME_API_VERSION },
        callOptions,
      );
      checkVersion(version, endpoint);
      const status = await runtime.status({ verbose: false }, callOptions);
      const readiness = runtimeReadiness(status);
      if (!readiness.runtimeReady) {
        throw new RuntimeError(
          GrpcCode.FailedPrecondition,
          readiness.problems.join("; "),
        );
      }
      if (!readiness.networkReady) {
        options.logger?.warn("Container runtime network not ready", {
          endpoint,
          networkReady: readiness.problems.join("; "),
        });
      }
      return { version, status, readiness };
    } catch (error) {
      const retryable = isUnavailable(error) ||
        (error instanceof RuntimeError &&
          error.code === GrpcCode.FailedPrecondition &&
          error.grpcMessage.startsWith("container runtime not ready"));
      if (!retryable || clock.now() + interval > deadline) {
        throw wrapHandshakeError(error, endpoint);
      }
      options.logger?.v(2).info("Waiting for the container runtime", {
        endpoint,
        attempt,
        err: errorMessage(error),
      });
      await clock.sleep(interval, options.signal);
    }
  }
}

function wrapHandshakeError(error: unknown, endpoint: string): unknown {
  if (!(error instanceof RuntimeError)) return error;
  if (error.code === GrpcCode.Unimplemented) {
    return new RuntimeError(
      GrpcCode.Unimplemented,
      `validate CRI v1 runtime API for endpoint "${endpoint}": the runtime does not serve runtime.v1.RuntimeService (${error.grpcMessage})`,
      { cause: error, ...(error.method ? { method: error.method } : {}) },
    );
  }
  return error;
}

/** Options for {@link connectRuntime}. */
export interface ConnectRuntimeOptions
  extends CriRuntimeOptions, Omit<HandshakeOptions, "endpoint" | "logger"> {}

/** A connected client plus what the handshake learned. */
export interface ConnectedRuntime extends HandshakeResult {
  runtime: CriRuntime;
}

/**
 * Creates the gRPC CRI client and performs the start-up handshake. On
 * failure the client is closed before the error propagates.
 */
export async function connectRuntime(
  options: ConnectRuntimeOptions,
): Promise<ConnectedRuntime> {
  const runtime = createCriRuntime(options);
  try {
    const result = await handshake(runtime, {
      ...options,
      endpoint: options.endpoint,
    });
    return { runtime, ...result };
  } catch (error) {
    await runtime.close();
    throw error;
  }
}

/**
 * The startup handshake (upstream's "validate service connection"): a runtime
 * that answers with another API than CRI v1 is fatal; one that does not answer
 * yet or is not ready is only logged and then retried by the PLEG and the
 * workers, because at boot containerd may well start after the kubelet.
 */
export async function validateRuntimeConnection(
  runtime: RuntimeService,
  options: { endpoint: string; logger: Logger; timeoutMs: number },
): Promise<boolean> {
  const { endpoint, logger, timeoutMs } = options;
  let version;
  try {
    version = await runtime.version(
      { version: KUBE_RUNTIME_API_VERSION },
      { timeoutMs },
    );
  } catch (cause) {
    const err = errorMessage(cause);
    if (isUnimplemented(cause)) {
      logger.error("failed to run Kubelet: validate service connection", {
        endpoint,
        err,
      });
      return false;
    }
    logger.warn("Container runtime is not answering yet, will retry", {
      endpoint,
      err,
    });
    return true;
  }
  try {
    checkVersion(version, endpoint);
  } catch (cause) {
    logger.error("failed to run Kubelet: validate service connection", {
      endpoint,
      err: errorMessage(cause),
    });
    return false;
  }
  logger.info("Connected to the container runtime", {
    endpoint,
    runtimeName: version.runtimeName,
    runtimeVersion: version.runtimeVersion,
  });
  const status = await runtime.status({ verbose: false }, { timeoutMs })
    .catch(() => undefined);
  const problems = status
    ? runtimeReadiness(status).problems
    : ["container runtime status check may not have completed yet"];
  for (const problem of problems) logger.warn(problem, { endpoint });
  return true;
}
