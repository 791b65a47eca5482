/**
 * Services over the REST client, for the service environment variables of containers
 * (upstream's kubelet service informer): a LIST and a WATCH of the Services of every
 * namespace whose `spec.clusterIP` is not `None` (headless Services give no variables, so
 * upstream's informer leaves them out with the same field selector). The Node authorizer
 * grants nodes list/watch on services.
 * @module
 */
import type { ObjectMeta } from "./core_v1.ts";
import { throwIfWatchError } from "./errors.ts";
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

/** One event of a list/watch; ERROR events are thrown as `ApiStatusError`s instead. */
export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";
  object: T;
}

/** A LIST's items and the version to watch from. */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
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

const NOT_HEADLESS = "spec.clusterIP!=None";

/** {@linkcode ServiceApi} over one REST client. */
export class ServiceClient implements ServiceApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  async listServices(options?: ApiCallOptions): Promise<ListResult<Service>> {
    const q = new URLSearchParams({ fieldSelector: NOT_HEADLESS });
    const list = await this.#rest.request<
      { metadata?: { resourceVersion?: string }; items?: Service[] }
    >({
      method: "GET",
      path: `/api/v1/services?${q}`,
      ...(options?.signal ? { signal: options.signal } : {}),
    });
    return {
      items: list.items ?? [],
      resourceVersion: list.metadata?.resourceVersion ?? "",
    };
  }

  async *watchServices(
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<Service>> {
    const q = new URLSearchParams({
      fieldSelector: NOT_HEADLESS,
      watch: "true",
      allowWatchBookmarks: "true",
      resourceVersion,
      timeoutSeconds: String(options.timeoutSeconds),
    });
    for await (
      const raw of this.#rest.stream({
        path: `/api/v1/services?${q}`,
        ...(options.signal ? { signal: options.signal } : {}),
      })
    ) {
      throwIfWatchError(raw, "services");
      yield raw as WatchEvent<Service>;
    }
  }
}
