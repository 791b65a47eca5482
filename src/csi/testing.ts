/**
 * Fakes for the CSI node side: a CSI node client and a registration client that log their calls
 * and can be told to fail, and an in-memory CSINode store.
 * @module
 */
import {
  ApiConflictError,
  ApiNotFoundError,
  type CsiNode,
  type ObjectMeta,
} from "../api/mod.ts";
import type {
  CsiNodeClient,
  CsiNodeInfo,
  PluginInfo,
  PublishRequest,
  RegistrationClient,
  StageRequest,
} from "./csi_client.ts";
import type { CsiNodeRegistrationApi } from "./csi_node_object.ts";

/** One logged call: the method and its main argument. */
export interface FakeCall {
  method: string;
  args: unknown;
}

/** A driver's node service in memory. */
export class FakeCsiNodeClient implements CsiNodeClient {
  calls: FakeCall[] = [];
  capabilities = new Set<string>(["STAGE_UNSTAGE_VOLUME"]);
  info: CsiNodeInfo = { nodeId: "node-1", maxVolumesPerNode: 0, topology: {} };
  /** Method name → error its next calls reject with. */
  failures = new Map<string, Error>();

  #log(method: string, args: unknown): Promise<void> {
    this.calls.push({ method, args });
    const error = this.failures.get(method);
    return error ? Promise.reject(error) : Promise.resolve();
  }

  async nodeGetInfo(): Promise<CsiNodeInfo> {
    await this.#log("NodeGetInfo", {});
    return this.info;
  }
  async nodeGetCapabilities(): Promise<Set<string>> {
    await this.#log("NodeGetCapabilities", {});
    return new Set(this.capabilities);
  }
  nodeStageVolume(request: StageRequest): Promise<void> {
    return this.#log("NodeStageVolume", request);
  }
  nodeUnstageVolume(
    volumeId: string,
    stagingTargetPath: string,
  ): Promise<void> {
    return this.#log("NodeUnstageVolume", { volumeId, stagingTargetPath });
  }
  nodePublishVolume(request: PublishRequest): Promise<void> {
    return this.#log("NodePublishVolume", request);
  }
  nodeUnpublishVolume(volumeId: string, targetPath: string): Promise<void> {
    return this.#log("NodeUnpublishVolume", { volumeId, targetPath });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  /** The logged calls of `method`. */
  of(method: string): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }
}

/** A registration socket in memory. */
export class FakeRegistrationClient implements RegistrationClient {
  statuses: { registered: boolean; error?: string }[] = [];
  constructor(public info: PluginInfo) {}
  getInfo(): Promise<PluginInfo> {
    return Promise.resolve(this.info);
  }
  notifyRegistrationStatus(
    registered: boolean,
    error?: string,
  ): Promise<void> {
    this.statuses.push({ registered, ...(error ? { error } : {}) });
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * CSINodes and one Node's metadata in memory; `conflicts` makes that many next CSINode
 * updates fail with 409.
 */
export class FakeCsiNodeApi implements CsiNodeRegistrationApi {
  nodes = new Map<string, CsiNode>();
  nodeMeta: ObjectMeta = { name: "n1", resourceVersion: "1" };
  conflicts = 0;
  writes: string[] = [];

  getCsiNode(name: string): Promise<CsiNode> {
    const node = this.nodes.get(name);
    if (!node) {
      return Promise.reject(
        new ApiNotFoundError(`csinodes "${name}" not found`, { code: 404 }),
      );
    }
    return Promise.resolve(structuredClone(node));
  }
  createCsiNode(node: CsiNode): Promise<CsiNode> {
    this.writes.push("create");
    this.nodes.set(node.metadata.name ?? "", structuredClone(node));
    return Promise.resolve(node);
  }
  getNodeMetadata(): Promise<ObjectMeta> {
    return Promise.resolve(structuredClone(this.nodeMeta));
  }
  /** A strategic merge of labels and annotations (null deletes a key). */
  patchNodeMetadata(
    _name: string,
    patch: {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    },
  ): Promise<ObjectMeta> {
    this.writes.push("patch node");
    const merge = (
      into: Record<string, string> | undefined,
      from: Record<string, string | null> | undefined,
    ) => {
      const out = { ...(into ?? {}) };
      for (const [k, v] of Object.entries(from ?? {})) {
        if (v === null) delete out[k];
        else out[k] = v;
      }
      return out;
    };
    this.nodeMeta = {
      ...this.nodeMeta,
      labels: merge(this.nodeMeta.labels, patch.labels),
      annotations: merge(this.nodeMeta.annotations, patch.annotations),
    };
    return Promise.resolve(structuredClone(this.nodeMeta));
  }
  updateCsiNode(node: CsiNode): Promise<CsiNode> {
    this.writes.push("update");
    if (this.conflicts > 0) {
      this.conflicts--;
      return Promise.reject(
        new ApiConflictError("the object has been modified", {
          code: 409,
          reason: "Conflict",
        }),
      );
    }
    this.nodes.set(node.metadata.name ?? "", structuredClone(node));
    return Promise.resolve(node);
  }
}
