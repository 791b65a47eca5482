/**
 * The storage objects a kubelet reads and writes over the REST client: a pod's
 * PersistentVolumeClaims and their PersistentVolumes (GET by name, what the Node authorizer
 * grants for claims of pods bound to the node), CSIDrivers and VolumeAttachments (GET), the
 * node's own CSINode (GET, create, replace) and its Node's labels and annotations (GET, patch).
 * @module
 */
import type { ObjectMeta } from "./core_v1.ts";
import type { RestClient } from "./rest_client.ts";
import type { ApiCallOptions } from "./types.ts";

/** core/v1 PersistentVolumeClaim, the fields the kubelet reads. */
export interface PersistentVolumeClaim {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { volumeName?: string; volumeMode?: string };
  status?: { phase?: string };
}

/** core/v1 CSIPersistentVolumeSource (also the shape of a VolumeAttachment's inline spec). */
export interface CsiPersistentVolumeSource {
  driver: string;
  volumeHandle: string;
  readOnly?: boolean;
  fsType?: string;
  volumeAttributes?: Record<string, string>;
  nodeStageSecretRef?: { name: string; namespace: string };
  nodePublishSecretRef?: { name: string; namespace: string };
}

/** core/v1 PersistentVolume, the fields the kubelet reads. */
export interface PersistentVolume {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: {
    claimRef?: { namespace?: string; name?: string; uid?: string };
    volumeMode?: string;
    accessModes?: string[];
    mountOptions?: string[];
    hostPath?: { path: string; type?: string };
    local?: { path: string; fsType?: string };
    csi?: CsiPersistentVolumeSource;
    [source: string]: unknown;
  };
}

/** storage.k8s.io/v1 CSIDriver, the fields the kubelet reads. */
export interface CsiDriver {
  metadata: ObjectMeta;
  spec?: {
    attachRequired?: boolean;
    podInfoOnMount?: boolean;
    fsGroupPolicy?: string;
    volumeLifecycleModes?: string[];
    requiresRepublish?: boolean;
    seLinuxMount?: boolean;
  };
}

/** storage.k8s.io/v1 VolumeAttachment, the fields the kubelet reads. */
export interface VolumeAttachment {
  metadata: ObjectMeta;
  spec?: {
    attacher?: string;
    nodeName?: string;
    source?: { persistentVolumeName?: string };
  };
  status?: {
    attached?: boolean;
    attachmentMetadata?: Record<string, string>;
    attachError?: { message?: string };
  };
}

/** One driver entry of a CSINode. */
export interface CsiNodeDriver {
  name: string;
  nodeID: string;
  topologyKeys?: string[] | null;
  allocatable?: { count?: number };
}

/** storage.k8s.io/v1 CSINode. */
export interface CsiNode {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: { drivers: CsiNodeDriver[] | null };
}

/** What the kubelet's storage code needs from the API server. */
export interface StorageApi {
  /** Rejects with `ApiNotFoundError` (404) or `ApiStatusError` (e.g. 403). */
  getPersistentVolumeClaim(
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<PersistentVolumeClaim>;
  getPersistentVolume(
    name: string,
    options?: ApiCallOptions,
  ): Promise<PersistentVolume>;
  getCsiDriver(name: string, options?: ApiCallOptions): Promise<CsiDriver>;
  getVolumeAttachment(
    name: string,
    options?: ApiCallOptions,
  ): Promise<VolumeAttachment>;
  getCsiNode(name: string, options?: ApiCallOptions): Promise<CsiNode>;
  createCsiNode(node: CsiNode, options?: ApiCallOptions): Promise<CsiNode>;
  /** PUT; rejects with a 409 `ApiStatusError` when `resourceVersion` is stale. */
  updateCsiNode(node: CsiNode, options?: ApiCallOptions): Promise<CsiNode>;
  /** The node's labels and annotations (for the CSI node id annotation and topology labels). */
  getNodeMetadata(
    name: string,
    options?: ApiCallOptions,
  ): Promise<ObjectMeta>;
  /** A strategic merge patch of the node's `metadata` (labels, annotations). */
  patchNodeMetadata(
    name: string,
    metadata: Pick<ObjectMeta, "labels" | "annotations"> & {
      resourceVersion?: string;
    },
    options?: ApiCallOptions,
  ): Promise<ObjectMeta>;
}

function seg(s: string): string {
  return encodeURIComponent(s);
}

const STORAGE = "/apis/storage.k8s.io/v1";

/** {@linkcode StorageApi} over one REST client. */
export class StorageClient implements StorageApi {
  #rest: RestClient;

  constructor(deps: { rest: RestClient }) {
    this.#rest = deps.rest;
  }

  #get<T>(path: string, options?: ApiCallOptions): Promise<T> {
    return this.#rest.request<T>({
      method: "GET",
      path,
      ...(options?.signal ? { signal: options.signal } : {}),
    });
  }

  getPersistentVolumeClaim(
    namespace: string,
    name: string,
    options?: ApiCallOptions,
  ): Promise<PersistentVolumeClaim> {
    return this.#get(
      `/api/v1/namespaces/${seg(namespace)}/persistentvolumeclaims/${
        seg(name)
      }`,
      options,
    );
  }

  getPersistentVolume(
    name: string,
    options?: ApiCallOptions,
  ): Promise<PersistentVolume> {
    return this.#get(`/api/v1/persistentvolumes/${seg(name)}`, options);
  }

  getCsiDriver(name: string, options?: ApiCallOptions): Promise<CsiDriver> {
    return this.#get(`${STORAGE}/csidrivers/${seg(name)}`, options);
  }

  getVolumeAttachment(
    name: string,
    options?: ApiCallOptions,
  ): Promise<VolumeAttachment> {
    return this.#get(`${STORAGE}/volumeattachments/${seg(name)}`, options);
  }

  getCsiNode(name: string, options?: ApiCallOptions): Promise<CsiNode> {
    return this.#get(`${STORAGE}/csinodes/${seg(name)}`, options);
  }

  createCsiNode(node: CsiNode, options?: ApiCallOptions): Promise<CsiNode> {
    return this.#rest.request<CsiNode>({
      method: "POST",
      path: `${STORAGE}/csinodes`,
      body: { apiVersion: "storage.k8s.io/v1", kind: "CSINode", ...node },
      ...(options?.signal ? { signal: options.signal } : {}),
    });
  }

  async getNodeMetadata(
    name: string,
    options?: ApiCallOptions,
  ): Promise<ObjectMeta> {
    const node = await this.#get<{ metadata: ObjectMeta }>(
      `/api/v1/nodes/${seg(name)}`,
      options,
    );
    return node.metadata;
  }

  async patchNodeMetadata(
    name: string,
    metadata: Pick<ObjectMeta, "labels" | "annotations"> & {
      resourceVersion?: string;
    },
    options?: ApiCallOptions,
  ): Promise<ObjectMeta> {
    const node = await this.#rest.request<{ metadata: ObjectMeta }>({
      method: "PATCH",
      path: `/api/v1/nodes/${seg(name)}`,
      body: { metadata },
      contentType: "application/strategic-merge-patch+json",
      ...(options?.signal ? { signal: options.signal } : {}),
    });
    return node.metadata;
  }

  updateCsiNode(node: CsiNode, options?: ApiCallOptions): Promise<CsiNode> {
    return this.#rest.request<CsiNode>({
      method: "PUT",
      path: `${STORAGE}/csinodes/${seg(node.metadata.name ?? "")}`,
      body: { apiVersion: "storage.k8s.io/v1", kind: "CSINode", ...node },
      ...(options?.signal ? { signal: options.signal } : {}),
    });
  }
}
