/**
 * A container's volume mounts from the volume manager, with what it needs from the pod side:
 * `subPathExpr` expanded with the container's env, and which containers of the pod count as
 * running (running or unknown in the runtime view, or started earlier in the same sync).
 *
 * @module
 */

import type { CriMount, VolumeManager } from "../../volume/mod.ts";
import { type EnvContext, makeEnvironment } from "../env/container_env.ts";
import { expandSubPathExpr } from "./subpath_expr.ts";
import type { Container, Pod, PodRuntimeStatus } from "../types.ts";

/** What the mounts of one container start depend on. */
export interface VolumeMountContext {
  pod: Pod;
  status: PodRuntimeStatus;
  podIPs: string[];
  nodeName: string;
  started?: ReadonlySet<string>;
  /** What else the container's env sees (objects, node allocatable, host IPs). */
  env?: Partial<EnvContext>;
}

/**
 * The CRI mounts of `container`.
 * @throws {RangeError} when a mount cannot be made (reported as CreateContainerConfigError).
 */
export function containerVolumeMounts(
  volumes: VolumeManager,
  context: VolumeMountContext & { container: Container },
): Promise<CriMount[]> {
  const { pod, container } = context;
  const running = new Set(context.started ?? []);
  for (const c of context.status.containers) {
    if (c.state === "running" || c.state === "unknown") running.add(c.name);
  }
  let env: Map<string, string> | undefined;
  return volumes.containerMounts(pod, container, {
    running,
    expand(expr) {
      env ??= new Map(
        makeEnvironment(pod, container, {
          ...context.env,
          nodeName: context.nodeName,
          podIPs: context.podIPs,
          ...(context.podIPs[0] ? { podIP: context.podIPs[0] } : {}),
        }).map((e) => [e.key, e.value]),
      );
      return expandSubPathExpr(expr, env);
    },
  });
}
