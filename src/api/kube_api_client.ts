/**
 * {@linkcode NodeApi}, {@linkcode LeaseApi} and {@linkcode CsrApi} over the REST client: the
 * exact paths, verbs and content types the upstream kubelet uses (strategic merge patch for
 * `nodes/<name>/status`, PUT for lease renewals).
 * @module
 */
import { ApiNotFoundError } from "./errors.ts";
import type { RestClient } from "./rest_client.ts";
import {
  type ApiCallOptions,
  type CertificateSigningRequest,
  type CsrApi,
  type Lease,
  type LeaseApi,
  type Node,
  type NodeApi,
  signalOf,
  type WatchEvent,
} from "./types.ts";
import { watchCollection } from "./list_watch.ts";

/** The content type of a strategic merge patch. */
export const STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json";

const CSR_PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

function seg(name: string): string {
  return encodeURIComponent(name);
}

function leasePath(namespace: string, name?: string): string {
  const base = `/apis/coordination.k8s.io/v1/namespaces/${
    seg(namespace)
  }/leases`;
  return name === undefined ? base : `${base}/${seg(name)}`;
}

async function orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ApiNotFoundError) return undefined;
    throw e;
  }
}

/** The kubelet's API client: every consumer interface over one REST client. */
export class KubeApiClient implements NodeApi, LeaseApi, CsrApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  getNode(name: string, options?: ApiCallOptions): Promise<Node | undefined> {
    return orUndefined(this.#rest.request<Node>({
      method: "GET",
      path: `/api/v1/nodes/${seg(name)}`,
      ...signalOf(options),
    }));
  }

  createNode(node: Node, options?: ApiCallOptions): Promise<Node> {
    return this.#rest.request<Node>({
      method: "POST",
      path: "/api/v1/nodes",
      body: { apiVersion: "v1", kind: "Node", ...node },
      ...signalOf(options),
    });
  }

  patchNodeStatus(
    name: string,
    patch: unknown,
    options?: ApiCallOptions,
  ): Promise<Node> {
    return this.#rest.request<Node>({
      method: "PATCH",
      path: `/api/v1/nodes/${seg(name)}/status`,
      body: patch,
      contentType: STRATEGIC_MERGE_PATCH,
      ...signalOf(options),
    });
  }

  getLease(
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<Lease | undefined> {
    return orUndefined(this.#rest.request<Lease>({
      method: "GET",
      path: leasePath(namespace, name),
      ...signalOf(options),
    }));
  }

  createLease(lease: Lease, options?: ApiCallOptions): Promise<Lease> {
    return this.#rest.request<Lease>({
      method: "POST",
      path: leasePath(lease.metadata.namespace ?? "default"),
      body: { apiVersion: "coordination.k8s.io/v1", kind: "Lease", ...lease },
      ...signalOf(options),
    });
  }

  updateLease(lease: Lease, options?: ApiCallOptions): Promise<Lease> {
    return this.#rest.request<Lease>({
      method: "PUT",
      path: leasePath(
        lease.metadata.namespace ?? "default",
        lease.metadata.name ?? "",
      ),
      body: { apiVersion: "coordination.k8s.io/v1", kind: "Lease", ...lease },
      ...signalOf(options),
    });
  }

  createCsr(
    csr: CertificateSigningRequest,
    options?: ApiCallOptions,
  ): Promise<CertificateSigningRequest> {
    return this.#rest.request<CertificateSigningRequest>({
      method: "POST",
      path: CSR_PATH,
      body: {
        apiVersion: "certificates.k8s.io/v1",
        kind: "CertificateSigningRequest",
        ...csr,
      },
      ...signalOf(options),
    });
  }

  getCsr(
    name: string,
    options?: ApiCallOptions,
  ): Promise<CertificateSigningRequest | undefined> {
    return orUndefined(this.#rest.request<CertificateSigningRequest>({
      method: "GET",
      path: `${CSR_PATH}/${seg(name)}`,
      ...signalOf(options),
    }));
  }

  watchCsr(
    name: string,
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<CertificateSigningRequest>> {
    return watchCollection<CertificateSigningRequest>(
      this.#rest,
      {
        path: CSR_PATH,
        fieldSelector: `metadata.name=${name}`,
        what: "certificate signing requests",
      },
      resourceVersion,
      options,
    );
  }
}
