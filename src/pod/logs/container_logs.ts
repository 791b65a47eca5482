/**
 * The node's container log upkeep from a configuration: the `/var/log/containers` links and the
 * rotation loop, wired so that a rotation relinks a hard link to the new file.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { RuntimeService } from "../../runtime/mod.ts";
import { parseGoDuration } from "../../util/go_duration.ts";
import { quantityValue } from "../../util/quantity.ts";
import {
  CONTAINER_NAME_LABEL,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
} from "../runtime_labels.ts";
import {
  CONTAINER_LOGS_DIR,
  ContainerLogLinks,
  denoLogLinkFs,
  type LogLinkFs,
} from "./container_log_links.ts";
import {
  ContainerLogManager,
  type LogRotationPolicy,
} from "./container_log_rotation.ts";

/** The KubeletConfiguration fields container log upkeep reads (upstream defaults apply). */
export interface ContainerLogsConfig {
  containerLogMaxSize?: string | undefined;
  containerLogMaxFiles?: number | undefined;
  containerLogMaxWorkers?: number | undefined;
  containerLogMonitorInterval?: string | undefined;
}

/** Upstream defaults: 10Mi, 5 files, 1 worker, every 10 s. */
export function logRotationPolicy(
  config: ContainerLogsConfig,
): LogRotationPolicy {
  return {
    maxSizeBytes: quantityValue(config.containerLogMaxSize || "10Mi"),
    maxFiles: config.containerLogMaxFiles ?? 5,
    maxWorkers: config.containerLogMaxWorkers ?? 1,
    monitorIntervalMs: parseGoDuration(
      config.containerLogMonitorInterval || "10s",
    ),
  };
}

/** Links for the syncer and GC, and the rotation loop. */
export interface ContainerLogs {
  links: ContainerLogLinks;
  /** Rotates until `signal` aborts; never rejects. */
  run(signal: AbortSignal): Promise<void>;
}

/**
 * Builds the container log upkeep. The links go to upstream's fixed `/var/log/containers`
 * whatever `podLogsDir` is (log shippers look there); `linksDir` moves them, for tests that
 * run beside other kubelets.
 */
export function createContainerLogs(
  deps: {
    runtime: Pick<
      RuntimeService,
      "listContainers" | "containerStatus" | "reopenContainerLog"
    >;
    clock: Clock;
    logger: Logger;
    linkFs?: LogLinkFs;
    linksDir?: string;
  },
  options: ContainerLogsConfig,
): ContainerLogs {
  const logger = deps.logger.with({ component: "container-logs" });
  const links = new ContainerLogLinks(
    { fs: deps.linkFs ?? denoLogLinkFs(), logger },
    { dir: deps.linksDir ?? CONTAINER_LOGS_DIR },
  );
  const manager = new ContainerLogManager({
    runtime: deps.runtime,
    clock: deps.clock,
    logger,
    // a hard link still names the rotated file: link the new one
    onRotated: async ({ containerId, logPath, labels }) => {
      if (links.kind !== "hardlink") return;
      await links.link({
        podName: labels[POD_NAME_LABEL] ?? "",
        podNamespace: labels[POD_NAMESPACE_LABEL] ?? "",
        containerName: labels[CONTAINER_NAME_LABEL] ?? "",
        containerId,
      }, logPath);
    },
  }, logRotationPolicy(options));
  return { links, run: (signal) => manager.run(signal) };
}
