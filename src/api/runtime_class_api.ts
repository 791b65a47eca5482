/**
 * RuntimeClasses (`node.k8s.io/v1`) over the REST client: a GET by name, for the handler of a
 * pod's `runtimeClassName`. The Node authorizer's `system:node` role grants nodes get on them.
 * @module
 */
import type { ObjectMeta } from "./core_v1.ts";
import type { RestClient } from "./rest_client.ts";
import type { ApiCallOptions } from "./types.ts";

/** node.k8s.io/v1 RuntimeClass, the fields the kubelet reads. */
export interface RuntimeClass {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  /** The CRI runtime handler (`RunPodSandboxRequest.runtime_handler`). */
  handler: string;
}

/** What the runtime class lookup needs from the API server. */
export interface RuntimeClassApi {
  /** The RuntimeClass; rejects with `ApiNotFoundError` (404) or `ApiStatusError`. */
  getRuntimeClass(
    name: string,
    options?: ApiCallOptions,
  ): Promise<RuntimeClass>;
}

/** {@linkcode RuntimeClassApi} over one REST client. */
export class RuntimeClassClient implements RuntimeClassApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  getRuntimeClass(
    name: string,
    options?: ApiCallOptions,
  ): Promise<RuntimeClass> {
    return this.#rest.request<RuntimeClass>({
      method: "GET",
      path: `/apis/node.k8s.io/v1/runtimeclasses/${encodeURIComponent(name)}`,
      ...(options?.signal ? { signal: options.signal } : {}),
    });
  }
}
