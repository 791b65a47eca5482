/**
 * ConfigMaps, Secrets and service account tokens over the REST client, for the objects the
 * pods of this node use: GET by name, a per-object LIST and WATCH with
 * `fieldSelector=metadata.name=<name>` (the only forms the Node authorizer grants a node for
 * these kinds), and `serviceaccounts/<name>/token` (TokenRequest).
 * @module
 */
import type { ObjectMeta } from "./core_v1.ts";
import type { RestClient } from "./rest_client.ts";
import { type ApiCallOptions, signalOf } from "./types.ts";

/** core/v1 ConfigMap. */
export interface ConfigMap {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  data?: Record<string, string>;
  /** Values base64-encoded, as JSON `[]byte`. */
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

/** core/v1 Secret; `data` values are base64-encoded, as JSON `[]byte`. */
export interface Secret {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  type?: string;
  data?: Record<string, string>;
  immutable?: boolean;
}

/** authentication.k8s.io/v1 TokenRequest. */
export interface TokenRequest {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: {
    audiences?: string[];
    expirationSeconds?: number;
    boundObjectRef?: {
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
    };
  };
  status?: { token: string; expirationTimestamp: string };
}

/** The object kinds pods reference by name. */
export type ObjectKind = "configmaps" | "secrets";

/** Either kind's object. */
export type NamedObject = ConfigMap | Secret;

/** One watch event of a per-object watch. */
export interface ObjectWatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: NamedObject & { code?: number; reason?: string; message?: string };
}

/** What the pod object managers need from the API server. */
export interface ObjectApi {
  /** The object; rejects with `ApiNotFoundError` (404) or `ApiStatusError` (e.g. 403). */
  getObject(
    kind: ObjectKind,
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<NamedObject>;
  /** A LIST narrowed to one name: the object (if any) and the list's resourceVersion. */
  listObject(
    kind: ObjectKind,
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<{ object?: NamedObject; resourceVersion: string }>;
  /** A WATCH narrowed to one name from `resourceVersion`, ended by the server or `signal`. */
  watchObject(
    kind: ObjectKind,
    namespace: string,
    name: string,
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds?: number },
  ): AsyncIterable<ObjectWatchEvent>;
  /** POST `serviceaccounts/<name>/token`. */
  createToken(
    namespace: string,
    serviceAccount: string,
    request: TokenRequest,
    options?: ApiCallOptions,
  ): Promise<TokenRequest>;
}

function seg(s: string): string {
  return encodeURIComponent(s);
}

function collection(kind: ObjectKind, namespace: string): string {
  return `/api/v1/namespaces/${seg(namespace)}/${kind}`;
}

/** {@linkcode ObjectApi} over one REST client. */
export class ObjectClient implements ObjectApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  getObject(
    kind: ObjectKind,
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<NamedObject> {
    return this.#rest.request<NamedObject>({
      method: "GET",
      path: `${collection(kind, namespace)}/${seg(name)}`,
      ...signalOf(options),
    });
  }

  async listObject(
    kind: ObjectKind,
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<{ object?: NamedObject; resourceVersion: string }> {
    const list = await this.#rest.request<
      { metadata?: { resourceVersion?: string }; items?: NamedObject[] }
    >({
      method: "GET",
      path: `${collection(kind, namespace)}?fieldSelector=${
        seg(`metadata.name=${name}`)
      }`,
      ...signalOf(options),
    });
    const object = list.items?.[0];
    return {
      ...(object ? { object } : {}),
      resourceVersion: list.metadata?.resourceVersion ?? "",
    };
  }

  async *watchObject(
    kind: ObjectKind,
    namespace: string,
    name: string,
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds?: number },
  ): AsyncIterable<ObjectWatchEvent> {
    const query = [
      `fieldSelector=${seg(`metadata.name=${name}`)}`,
      "watch=true",
      "allowWatchBookmarks=true",
      `resourceVersion=${seg(resourceVersion)}`,
      `timeoutSeconds=${options.timeoutSeconds ?? 300}`,
    ].join("&");
    for await (
      const event of this.#rest.stream({
        path: `${collection(kind, namespace)}?${query}`,
        ...signalOf(options),
      })
    ) {
      yield event as ObjectWatchEvent;
    }
  }

  createToken(
    namespace: string,
    serviceAccount: string,
    request: TokenRequest,
    options?: ApiCallOptions,
  ): Promise<TokenRequest> {
    return this.#rest.request<TokenRequest>({
      method: "POST",
      path: `/api/v1/namespaces/${seg(namespace)}/serviceaccounts/${
        seg(serviceAccount)
      }/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        ...request,
      },
      ...signalOf(options),
    });
  }
}
