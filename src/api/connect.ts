/**
 * Connecting to the API server from the command line's view: `--kubeconfig`, after TLS
 * bootstrap from `--bootstrap-kubeconfig` when that is set.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { bootstrapClientCertificate } from "./bootstrap.ts";
import { type Connection, loadKubeconfig } from "./kubeconfig.ts";
import { RestEventApi } from "./event_api.ts";
import { KubeApiClient } from "./kube_api_client.ts";
import { type ObjectApi, ObjectClient } from "./object_client.ts";
import {
  type RuntimeClassApi,
  RuntimeClassClient,
} from "./runtime_class_api.ts";
import { RestPodApi } from "./pod_api.ts";
import { type ServiceApi, ServiceClient } from "./service_api.ts";
import { type NodeWatchApi, NodeWatchClient } from "./node_watch_api.ts";
import { type StorageApi, StorageClient } from "./storage_api.ts";
import { createRestClient, type RestClientOptions } from "./rest_client.ts";

/** An open API client; `close` releases its HTTP client (safe to call twice). */
export interface ApiConnection extends Disposable {
  api: KubeApiClient;
  /** Pod list/watch, status patches, deletes and mirror pod creation over the same client. */
  pods: RestPodApi;
  /** Event writes over the same client. */
  events: RestEventApi;
  /** The pods' ConfigMaps, Secrets and service account tokens over the same client. */
  objects: ObjectApi;
  /** Services (list/watch) for service env vars over the same client. */
  services: ServiceApi;
  /** The kubelet's own Node (list/watch) over the same client. */
  nodeWatch: NodeWatchApi;
  /** RuntimeClasses (get) for the pods' runtime handlers over the same client. */
  runtimeClasses: RuntimeClassApi;
  /** The pods' claims and volumes, CSI objects and the node's CSINode over the same client. */
  storage: StorageApi;
  /** The connection in use (updated by `reconnect`). */
  connection: Connection;
  /** Sends later requests with `next`'s identity (a rotated certificate). */
  reconnect(next: Connection): void;
  close(): void;
}

/** Options of {@linkcode connectApiServer}. */
export interface ConnectOptions {
  nodeName: string;
  kubeconfigPath: string;
  bootstrapKubeconfigPath?: string;
  /** `--cert-dir` (default /var/lib/kubelet/pki). */
  certDir?: string;
  /** `kubeAPIQPS`, `kubeAPIBurst`, timeouts. */
  client?: RestClientOptions;
  signal?: AbortSignal;
}

/** Opens an API client for an already resolved connection. */
export function openApiClient(
  deps: { clock: Clock },
  connection: Connection,
  options: RestClientOptions = {},
): ApiConnection {
  const rest = createRestClient(deps, connection, options);
  // Events get a client of their own, as upstream's event client: the event recorder paces
  // them with eventRecordQPS/eventBurst, so they neither wait for nor use kubeAPIQPS.
  const eventRest = createRestClient(deps, connection, { ...options, qps: -1 });
  const close = () => {
    rest.close();
    eventRest.close();
  };
  const open: ApiConnection = {
    api: new KubeApiClient({ rest }),
    pods: new RestPodApi({ rest }),
    events: new RestEventApi({ rest: eventRest }),
    objects: new ObjectClient({ rest }),
    services: new ServiceClient({ rest }),
    nodeWatch: new NodeWatchClient({ rest }),
    runtimeClasses: new RuntimeClassClient({ rest }),
    storage: new StorageClient({ rest }),
    connection,
    reconnect(next) {
      rest.reconnect(next);
      eventRest.reconnect(next);
      open.connection = next;
    },
    close,
    [Symbol.dispose]: close,
  };
  return open;
}

/**
 * Runs TLS bootstrap when a bootstrap kubeconfig is given, then opens a client with the
 * kubeconfig's identity (upstream `buildKubeletClientConfig`).
 */
export async function connectApiServer(
  deps: { clock: Clock; logger: Logger },
  options: ConnectOptions,
): Promise<ApiConnection> {
  if (options.bootstrapKubeconfigPath) {
    await bootstrapClientCertificate({
      ...deps,
      csrApiFor: (conn) => {
        const c = openApiClient(deps, conn, options.client);
        return Object.assign(c.api, { close: c.close });
      },
    }, {
      nodeName: options.nodeName,
      kubeconfigPath: options.kubeconfigPath,
      bootstrapKubeconfigPath: options.bootstrapKubeconfigPath,
      certDir: options.certDir ?? "/var/lib/kubelet/pki",
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
  const connection = await loadKubeconfig(options.kubeconfigPath);
  return openApiClient(deps, connection, options.client);
}
