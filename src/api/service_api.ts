/**
 * Services over the REST client, for the service environment variables of containers
 * (upstream's kubelet service informer): a LIST and a WATCH of the Services of every
 * namespace whose `spec.clusterIP` is not `None` (headless Services give no variables, so
 * upstream's informer leaves them out with the same field selector). The Node authorizer
 * grants nodes list/watch on services.
 * @module
 */
import type { ObjectMeta } from "./core_v1.ts";
import {
  listCollection,
  type ListResult,
  watchCollection,
  type WatchEvent,
} from "./list_watch.ts";
import type { RestClient } from "./rest_client.ts";
import type { ApiCallOptions } from "./types.ts";

/** `v1.ServicePort`, the fields the kubelet reads. */
export interface ServicePort {
  name?: string;
  protocol?: string;
  port: number;
}

/** core/v1 Service, the fields the kubelet reads. */
export interface Service {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { clusterIP?: string; ports?: ServicePort[] };
}

/** What the service cache needs from the API server. */
export interface ServiceApi {
  listServices(options?: ApiCallOptions): Promise<ListResult<Service>>;
  /** Ends when the server closes the stream; rejects with `ApiStatusError` (410: relist). */
  watchServices(
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<Service>>;
}

const NOT_HEADLESS = {
  path: "/api/v1/services",
  fieldSelector: "spec.clusterIP!=None",
};

/** {@linkcode ServiceApi} over one REST client. */
export class ServiceClient implements ServiceApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  listServices(options?: ApiCallOptions): Promise<ListResult<Service>> {
    return listCollection(this.#rest, NOT_HEADLESS, options);
  }

  watchServices(
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<Service>> {
    return watchCollection(
      this.#rest,
      { ...NOT_HEADLESS, what: "services" },
      resourceVersion,
      options,
    );
  }
}
