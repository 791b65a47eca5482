/**
 * {@linkcode PodApi}: the pod calls of the kubelet over the REST client, with the paths, verbs
 * and content types the upstream kubelet uses: list and watch of the pods bound to the node
 * (`fieldSelector=spec.nodeName=<node>`, all namespaces), GET, strategic merge patch of
 * `pods/<name>/status`, and DELETE with a UID precondition.
 * @module
 */
import type { Pod } from "./core_v1.ts";
import { ApiNotFoundError } from "./errors.ts";
import { STRATEGIC_MERGE_PATCH } from "./kube_api_client.ts";
import { watchCollection, type WatchEvent } from "./list_watch.ts";
import type { RestClient } from "./rest_client.ts";
import { type ApiCallOptions, signalOf } from "./types.ts";

/** `v1.PodList`, the parts the kubelet reads. */
export interface PodList {
  metadata: { resourceVersion?: string };
  items: Pod[];
}

/** One event of a watch of pods. */
export type PodWatchEvent = WatchEvent<Pod>;

/** Options of a list. */
export interface PodListOptions {
  /** e.g. `spec.nodeName=n1`. */
  fieldSelector: string;
}

/** Options of a watch. */
export interface PodWatchOptions extends PodListOptions {
  /** Start after this version (the list's). */
  resourceVersion: string;
  /** The server ends the watch after this long. */
  timeoutSeconds: number;
}

/** Options of a delete. */
export interface PodDeleteOptions {
  gracePeriodSeconds: number;
  /** Precondition: delete only the pod with this UID. */
  uid: string;
}

/** What the API pod source, the status manager and mirror pods need. */
export interface PodApi {
  listPods(query: PodListOptions, options?: ApiCallOptions): Promise<PodList>;
  /**
   * Watches pods from `query.resourceVersion` with bookmarks. Ends when the server closes the
   * stream; rejects with `ApiStatusError` (code 410 when the version is too old).
   */
  watchPods(
    query: PodWatchOptions,
    options?: ApiCallOptions,
  ): AsyncIterable<PodWatchEvent>;
  /** The pod, or undefined when it does not exist. */
  getPod(
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<Pod | undefined>;
  /** Strategic merge patch of `pods/<name>/status`; returns the stored pod. */
  patchPodStatus(
    namespace: string,
    name: string,
    patch: unknown,
    options?: ApiCallOptions,
  ): Promise<Pod>;
  /** Deletes the pod; rejects with `ApiConflictError` when the UID precondition fails. */
  deletePod(
    namespace: string,
    name: string,
    del: PodDeleteOptions,
    options?: ApiCallOptions,
  ): Promise<void>;
}

function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${
    encodeURIComponent(name)
  }`;
}

/** {@linkcode PodApi} over a REST client. */
export class RestPodApi implements PodApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  listPods(query: PodListOptions, options?: ApiCallOptions): Promise<PodList> {
    const q = new URLSearchParams({ fieldSelector: query.fieldSelector });
    return this.#rest.request<PodList>({
      method: "GET",
      path: `/api/v1/pods?${q}`,
      ...signalOf(options),
    });
  }

  watchPods(
    query: PodWatchOptions,
    options?: ApiCallOptions,
  ): AsyncIterable<PodWatchEvent> {
    return watchCollection(
      this.#rest,
      {
        path: "/api/v1/pods",
        fieldSelector: query.fieldSelector,
        what: "pods",
      },
      query.resourceVersion,
      { ...options, timeoutSeconds: query.timeoutSeconds },
    );
  }

  async getPod(
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<Pod | undefined> {
    try {
      return await this.#rest.request<Pod>({
        method: "GET",
        path: podPath(namespace, name),
        ...signalOf(options),
      });
    } catch (e) {
      if (e instanceof ApiNotFoundError) return undefined;
      throw e;
    }
  }

  /**
   * Creates a pod: the kubelet only creates mirror pods. Rejects with `ApiAlreadyExistsError`
   * when the name is taken.
   */
  createPod(pod: Pod, options?: ApiCallOptions): Promise<Pod> {
    const namespace = pod.metadata.namespace ?? "default";
    return this.#rest.request<Pod>({
      method: "POST",
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      body: { apiVersion: "v1", kind: "Pod", ...pod },
      ...signalOf(options),
    });
  }

  patchPodStatus(
    namespace: string,
    name: string,
    patch: unknown,
    options?: ApiCallOptions,
  ): Promise<Pod> {
    return this.#rest.request<Pod>({
      method: "PATCH",
      path: `${podPath(namespace, name)}/status`,
      body: patch,
      contentType: STRATEGIC_MERGE_PATCH,
      ...signalOf(options),
    });
  }

  async deletePod(
    namespace: string,
    name: string,
    del: PodDeleteOptions,
    options?: ApiCallOptions,
  ): Promise<void> {
    await this.#rest.request<unknown>({
      method: "DELETE",
      path: podPath(namespace, name),
      body: {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: del.gracePeriodSeconds,
        preconditions: { uid: del.uid },
      },
      ...signalOf(options),
    });
  }
}
