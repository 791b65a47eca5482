/**
 * The kubelet's own Node by list and watch (`fieldSelector=metadata.name=<node>`, the form the
 * Node authorizer grants a node for its own object), as upstream's node informer keeps it
 * current between status updates: labels and taints others change reach admission at once.
 * @module
 */
import {
  type CollectionQuery,
  listCollection,
  type ListResult,
  watchCollection,
  type WatchEvent,
} from "./list_watch.ts";
import type { RestClient } from "./rest_client.ts";
import type { ApiCallOptions, Node } from "./types.ts";

/** List and watch of one Node by name. */
export interface NodeWatchApi {
  /** The Node named `name` as a list of at most one. */
  listOwnNode(
    name: string,
    options?: ApiCallOptions,
  ): Promise<ListResult<Node>>;
  /** Its changes after `resourceVersion`; ends when the server closes the stream. */
  watchOwnNode(
    name: string,
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<Node>>;
}

function byName(name: string): CollectionQuery {
  return { path: "/api/v1/nodes", fieldSelector: `metadata.name=${name}` };
}

/** {@linkcode NodeWatchApi} over the REST client. */
export class NodeWatchClient implements NodeWatchApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  listOwnNode(
    name: string,
    options?: ApiCallOptions,
  ): Promise<ListResult<Node>> {
    return listCollection(this.#rest, byName(name), options);
  }

  watchOwnNode(
    name: string,
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<Node>> {
    return watchCollection(
      this.#rest,
      { ...byName(name), what: "nodes" },
      resourceVersion,
      options,
    );
  }
}
