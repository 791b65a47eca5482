/**
 * Wiring of the kubelet API (HTTPS on `address:port`, and `readOnlyPort` when non-zero): turns
 * the configuration and the running kubelet into `runApiServer`'s host and configuration. No
 * business logic lives here.
 *
 * Upstream refuses to start when the API cannot be set up (for example webhook authentication
 * without a kubeconfig, the config-file defaults in standalone mode). We log why and keep
 * running without the API: a standalone kubelet stays useful, and nothing is served that the
 * configuration did not secure.
 *
 * @module
 */

import type { Clock } from "./clock/mod.ts";
import type { Kubelet } from "./kubelet.ts";
import type { Logger } from "./log/mod.ts";
import { listRunningPods, type Pod } from "./pod/mod.ts";
import type { RuntimeService } from "./runtime/mod.ts";
import {
  type ApiServerConfig,
  type ApiServerHost,
  runApiServer,
} from "./server/mod.ts";
import type { PodStatusManager } from "./status/mod.ts";
import { parseGoDuration } from "./util/go_duration.ts";

/** The configuration and flags the kubelet API reads. */
export interface KubeletApiContext {
  config: {
    enableServer?: boolean | undefined;
    address?: string | undefined;
    port?: number | undefined;
    readOnlyPort?: number | undefined;
    tlsCertFile?: string | undefined;
    tlsPrivateKeyFile?: string | undefined;
    tlsMinVersion?: string | undefined;
    tlsCipherSuites?: string[] | undefined;
    enableDebuggingHandlers?: boolean | undefined;
    authentication?: {
      x509?: { clientCAFile?: string | undefined } | undefined;
      webhook?: {
        enabled?: boolean | undefined;
        cacheTTL?: string | undefined;
      } | undefined;
      anonymous?: { enabled?: boolean | undefined } | undefined;
    } | undefined;
    authorization?: {
      mode?: string | undefined;
      webhook?: {
        cacheAuthorizedTTL?: string | undefined;
        cacheUnauthorizedTTL?: string | undefined;
      } | undefined;
    } | undefined;
  };
  flags: {
    kubeconfig?: string | undefined;
    certDir?: string | undefined;
  };
}

/** What the kubelet API reads from the running kubelet. */
export interface KubeletApiDeps {
  clock: Clock;
  logger: Logger;
  kubelet: Pick<Kubelet, "podConfig" | "syncLoop">;
  statuses: Pick<PodStatusManager, "getPodStatus">;
  runtime: Pick<RuntimeService, "listPodSandbox" | "listContainers">;
}

function ms(value: string | undefined, fallback: number): number {
  return value ? parseGoDuration(value) : fallback;
}

/** The API server configuration of a kubelet configuration (config-file defaults). */
export function kubeletApiConfig(ctx: KubeletApiContext): ApiServerConfig {
  const { config, flags } = ctx;
  const authn = config.authentication ?? {};
  const authz = config.authorization ?? {};
  return {
    address: config.address || "0.0.0.0",
    port: config.port ?? 10250,
    readOnlyPort: config.readOnlyPort ?? 0,
    tlsCertFile: config.tlsCertFile,
    tlsPrivateKeyFile: config.tlsPrivateKeyFile,
    tlsMinVersion: config.tlsMinVersion,
    tlsCipherSuites: config.tlsCipherSuites,
    certDir: flags.certDir || "/var/lib/kubelet/pki",
    clientCAFile: authn.x509?.clientCAFile,
    anonymousAuth: authn.anonymous?.enabled ?? false,
    webhookAuthn: {
      enabled: authn.webhook?.enabled ?? true,
      cacheTtlMs: ms(authn.webhook?.cacheTTL, 120_000),
    },
    authorizationMode: authz.mode || "Webhook",
    webhookAuthz: {
      allowedTtlMs: ms(authz.webhook?.cacheAuthorizedTTL, 300_000),
      deniedTtlMs: ms(authz.webhook?.cacheUnauthorizedTTL, 30_000),
    },
    enableDebuggingHandlers: config.enableDebuggingHandlers ?? true,
    kubeconfig: flags.kubeconfig,
  };
}

/**
 * Serves the kubelet API until `options.signal` aborts; resolves once closed, or at once when
 * `enableServer` is false or the API cannot be set up (logged).
 */
export async function runKubeletApi(
  deps: KubeletApiDeps,
  ctx: KubeletApiContext & {
    nodeName: string;
    resyncIntervalMs: number;
    signal: AbortSignal;
  },
): Promise<void> {
  if (ctx.config.enableServer === false) return;
  const logger = deps.logger.with({ component: "kubelet-api" });
  const host: ApiServerHost = {
    clock: deps.clock,
    logger,
    syncLoop: deps.kubelet.syncLoop,
    resyncIntervalMs: ctx.resyncIntervalMs,
    nodeName: ctx.nodeName,
    pods: () =>
      deps.kubelet.podConfig.pods().map((pod: Pod) => {
        const status = pod.metadata.uid
          ? deps.statuses.getPodStatus(pod.metadata.uid)
          : undefined;
        return status ? { ...pod, status } : pod;
      }),
    runningPods: () => listRunningPods(deps.runtime),
    config: () => ctx.config as Record<string, unknown>,
  };
  try {
    await runApiServer(host, kubeletApiConfig(ctx), {
      signal: ctx.signal,
      hostname: ctx.nodeName,
    });
  } catch (cause) {
    logger.error("Cannot serve the kubelet API", {
      err: cause instanceof Error ? cause.message : String(cause),
    });
  }
}
