/**
 * The slice of the Kubernetes API the kubelet speaks, as plain JSON shapes (core/v1 Node,
 * coordination.k8s.io/v1 Lease, certificates.k8s.io/v1 CertificateSigningRequest), and the
 * narrow, consumer-shaped interfaces the rest of the kubelet calls: {@linkcode NodeApi} (node
 * status), {@linkcode LeaseApi} (the heartbeat), {@linkcode CsrApi} (TLS bootstrap).
 *
 * The shapes name only the fields the kubelet reads or writes; the API server keeps the rest.
 * @module
 */

import type { ObjectMeta } from "./core_v1.ts";

/** `v1.Taint`. */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

/** `v1.NodeSpec`. */
export interface NodeSpec {
  taints?: Taint[];
  unschedulable?: boolean;
  providerID?: string;
  podCIDR?: string;
  podCIDRs?: string[];
}

/** `v1.NodeCondition`. */
export interface NodeCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** `v1.NodeAddress`. */
export interface NodeAddress {
  type:
    | "InternalIP"
    | "ExternalIP"
    | "Hostname"
    | "InternalDNS"
    | "ExternalDNS";
  address: string;
}

/** `v1.NodeSystemInfo`. */
export interface NodeSystemInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  containerRuntimeVersion: string;
  kubeletVersion: string;
  kubeProxyVersion: string;
  operatingSystem: string;
  architecture: string;
}

/** `v1.NodeStatus`, the parts the kubelet reports. */
export interface NodeStatus {
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  conditions?: NodeCondition[];
  addresses?: NodeAddress[];
  daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
  nodeInfo?: NodeSystemInfo;
  images?: { names?: string[]; sizeBytes?: number }[];
  runtimeHandlers?: {
    name: string;
    features?: { recursiveReadOnlyMounts?: boolean; userNamespaces?: boolean };
  }[];
  features?: { supplementalGroupsPolicy?: boolean };
}

/** `v1.Node`. */
export interface Node {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: NodeSpec;
  status?: NodeStatus;
}

/** `coordinationv1.LeaseSpec`; times are MicroTime (RFC 3339 with microseconds). */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** `coordinationv1.Lease`. */
export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: LeaseSpec;
}

/** `certificatesv1.CertificateSigningRequestCondition`. */
export interface CsrCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** `certificatesv1.CertificateSigningRequest`. */
export interface CertificateSigningRequest {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    /** PEM of the PKCS#10 request, base64-encoded as JSON `[]byte`. */
    request: string;
    signerName: string;
    usages?: string[];
    expirationSeconds?: number;
    username?: string;
  };
  status?: {
    conditions?: CsrCondition[];
    /** PEM of the issued certificate chain, base64-encoded. */
    certificate?: string;
  };
}

/** Per-call options. */
export interface ApiCallOptions {
  signal?: AbortSignal;
}

/** The `signal` of `options`, as a property to spread into a request, or nothing. */
export function signalOf(options?: ApiCallOptions): { signal?: AbortSignal } {
  return options?.signal ? { signal: options.signal } : {};
}

/** What node status reporting needs (upstream `kubelet_node_status.go`). */
export interface NodeApi {
  /** The Node, or undefined when it does not exist. */
  getNode(name: string, options?: ApiCallOptions): Promise<Node | undefined>;
  /** Creates the Node; rejects with `ApiAlreadyExistsError` when it exists. */
  createNode(node: Node, options?: ApiCallOptions): Promise<Node>;
  /**
   * Applies a strategic merge patch to `nodes/<name>/status` and returns the
   * Node the server stored.
   */
  patchNodeStatus(
    name: string,
    patch: unknown,
    options?: ApiCallOptions,
  ): Promise<Node>;
}

/** What the node lease heartbeat needs (`component-helpers` lease controller). */
export interface LeaseApi {
  getLease(
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<Lease | undefined>;
  /** Rejects with `ApiAlreadyExistsError` when it exists. */
  createLease(lease: Lease, options?: ApiCallOptions): Promise<Lease>;
  /** PUT with the lease's resourceVersion; rejects with `ApiConflictError` when stale. */
  updateLease(lease: Lease, options?: ApiCallOptions): Promise<Lease>;
}

/** What TLS bootstrap needs (`k8s.io/client-go/util/certificate/csr`). */
export interface CsrApi {
  createCsr(
    csr: CertificateSigningRequest,
    options?: ApiCallOptions,
  ): Promise<CertificateSigningRequest>;
  getCsr(
    name: string,
    options?: ApiCallOptions,
  ): Promise<CertificateSigningRequest | undefined>;
  /**
   * The changes to one request after `resourceVersion` (a watch narrowed to its name) for at
   * most `timeoutSeconds`; ERROR events are thrown. Omitted → the request is polled.
   */
  watchCsr?(
    name: string,
    resourceVersion: string,
    options: ApiCallOptions & { timeoutSeconds: number },
  ): AsyncIterable<WatchEvent<CertificateSigningRequest>>;
}

/** One event of a list/watch; ERROR events are thrown as `ApiStatusError`s instead. */
export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";
  object: T;
}
