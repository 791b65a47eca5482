/**
 * Container lifecycle hooks (postStart, preStop). `exec` hooks run through CRI `ExecSync`,
 * `sleep` hooks wait on the injected clock. `httpGet`/`tcpSocket` hooks are not implemented yet:
 * they are skipped with a warning.
 *
 * @module
 */

import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { RuntimeService } from "../runtime/mod.ts";
import type { LifecycleHandler, Pod } from "./types.ts";

/** Dependencies of {@linkcode runLifecycleHook}. */
export interface HookDeps {
  runtime: RuntimeService;
  clock: Clock;
  logger: Logger;
}

/** Options of {@linkcode runLifecycleHook}. */
export interface HookOptions {
  /** Upper bound in seconds (0 = none). */
  timeoutSeconds: number;
  signal?: AbortSignal;
}

const DECODER = new TextDecoder();

function podRef(pod: Pod): string {
  const m = pod.metadata;
  return `${m.name}_${m.namespace}(${m.uid})`;
}

/**
 * Runs one hook handler against a running container. Resolves to an error message when the
 * hook failed, or undefined on success (or when the handler kind is skipped).
 */
export async function runLifecycleHook(
  deps: HookDeps,
  target: {
    pod: Pod;
    containerName: string;
    containerId: string;
    handler: LifecycleHandler;
  },
  options: HookOptions,
): Promise<string | undefined> {
  const { pod, containerName, containerId, handler } = target;
  if (handler.exec) {
    const cmd = handler.exec.command ?? [];
    try {
      const res = await deps.runtime.execSync(
        { containerId, cmd, timeout: BigInt(options.timeoutSeconds) },
        {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.timeoutSeconds > 0
            ? { timeoutMs: options.timeoutSeconds * 1000 + 5_000 }
            : {}),
        },
      );
      if (res.exitCode === 0) return undefined;
      const output = DECODER.decode(res.stderr) + DECODER.decode(res.stdout);
      return `Exec lifecycle hook ([${
        cmd.join(" ")
      }]) for Container "${containerName}" in Pod "${
        podRef(pod)
      }" failed - error: command '${
        cmd.join(" ")
      }' exited with ${res.exitCode}: ${output}`;
    } catch (error) {
      options.signal?.throwIfAborted();
      const detail = error instanceof Error ? error.message : String(error);
      return `Exec lifecycle hook ([${
        cmd.join(" ")
      }]) for Container "${containerName}" in Pod "${
        podRef(pod)
      }" failed - error: ${detail}`;
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
  deps.logger.warn(
    "Skipping lifecycle hook: only exec and sleep handlers are supported",
    {
      pod: podRef(pod),
      container: containerName,
    },
  );
  return undefined;
}
