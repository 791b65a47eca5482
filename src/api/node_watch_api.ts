/**
 * The kubelet's own Node by list and watch (`fieldSelector=metadata.name=<node>`, the form the
 * Node authorizer grants a node for its own object), as upstream's node informer keeps it
 * current between status updates: labels and taints others change reach admission at once.
 * @module
 */
import { throwIfWatchError } from "./errors.ts";
import type { RestClient } from "./rest_client.ts";
import type { ListResult, WatchEvent } from "./service_api.ts";
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

function byName(name: string): string {
  return `metadata.name=${name}`;
}

/** {@linkcode NodeWatchApi} over the REST client. */
export class NodeWatchClient implements NodeWatchApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  async listOwnNode(
    name: string,
    options?: ApiCallOptions,
  ): Promise<ListResult<Node>> {
    const q = new URLSearchParams({ fieldSelector: byName(name) });
    const list = await this.#rest.request<
      { metadata?: { resourceVersion?: string }; items?: Node[] }
    >({
      method: "GET",
      path: `/api/v1/nodes?${q}`,
      ...(options?.signal ? { signal: options.signal } : {}),
    });
    return {
      items: list.items ?? [],
      resourceVersion: list.metadata?.resourceVersion ?? "",
    };
  }

  async *watchOwnNode(
    name: string,
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<Node>> {
    const q = new URLSearchParams({
      fieldSelector: byName(name),
      watch: "true",
      allowWatchBookmarks: "true",
      resourceVersion,
      timeoutSeconds: String(options.timeoutSeconds),
    });
    for await (
      const raw of this.#rest.stream({
        path: `/api/v1/nodes?${q}`,
        ...(options.signal ? { signal: options.signal } : {}),
      })
    ) {
      throwIfWatchError(raw, "nodes");
      yield raw as WatchEvent<Node>;
    }
  }
}
