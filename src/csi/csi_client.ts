/**
 * The two gRPC clients of the CSI node side, over the CRI client's transport (HTTP/2 on a unix
 * socket, generated protobuf messages): a plugin's registration socket
 * (`pluginregistration.Registration`) and a driver's CSI socket (`csi.v1.Node`). Failures read
 * as upstream's gRPC errors (`rpc error: code = NotFound desc = ...`).
 * @module
 */
import {
  createGrpcTransport,
  grpcCodeName,
  type GrpcTransport,
  RuntimeError,
} from "../runtime/mod.ts";
import {
  Node,
  NodeServiceCapability_RPC_Type,
  VolumeCapability_AccessMode_Mode,
} from "./gen/csi_pb.ts";
import { Registration } from "./gen/pluginregistration_pb.ts";

/** What a registration socket says about its plugin. */
export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supportedVersions: string[];
}

/** A plugin's registration socket. */
export interface RegistrationClient {
  getInfo(): Promise<PluginInfo>;
  notifyRegistrationStatus(registered: boolean, error?: string): Promise<void>;
  close(): Promise<void>;
}

/** `NodeGetInfo`'s answer. */
export interface CsiNodeInfo {
  nodeId: string;
  /** 0: no limit. */
  maxVolumesPerNode: number;
  /** The accessible topology's segments (key → value). */
  topology: Record<string, string>;
}

/** CSI access modes (`VolumeCapability.AccessMode.Mode`), by name. */
export type CsiAccessMode = keyof typeof VolumeCapability_AccessMode_Mode;

/** One volume capability of a stage or publish call (filesystem access only). */
export interface CsiMountCapability {
  accessMode: CsiAccessMode;
  fsType: string;
  mountFlags: string[];
}

/** `NodeStageVolume`'s fields. */
export interface StageRequest {
  volumeId: string;
  publishContext: Record<string, string>;
  stagingTargetPath: string;
  capability: CsiMountCapability;
  secrets: Record<string, string>;
  volumeContext: Record<string, string>;
}

/** `NodePublishVolume`'s fields. */
export interface PublishRequest {
  volumeId: string;
  publishContext: Record<string, string>;
  /** Empty when the driver does not stage. */
  stagingTargetPath: string;
  targetPath: string;
  capability: CsiMountCapability;
  readonly: boolean;
  secrets: Record<string, string>;
  volumeContext: Record<string, string>;
}

/** A driver's CSI node service. */
export interface CsiNodeClient {
  nodeGetInfo(): Promise<CsiNodeInfo>;
  /** The names of the node service capabilities, e.g. `STAGE_UNSTAGE_VOLUME`. */
  nodeGetCapabilities(): Promise<Set<string>>;
  nodeStageVolume(request: StageRequest): Promise<void>;
  nodeUnstageVolume(volumeId: string, stagingTargetPath: string): Promise<void>;
  nodePublishVolume(request: PublishRequest): Promise<void>;
  nodeUnpublishVolume(volumeId: string, targetPath: string): Promise<void>;
  close(): Promise<void>;
}

/** A failed CSI or registration call, worded as grpc-go prints it. */
export class CsiCallError extends Error {
  override name = "CsiCallError";
  /** The gRPC status code. */
  readonly code: number;
  constructor(code: number, message: string, options?: ErrorOptions) {
    super(
      `rpc error: code = ${grpcCodeName(code)} desc = ${message}`,
      options,
    );
    this.code = code;
  }
}

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RuntimeError) {
      throw new CsiCallError(error.code, error.grpcMessage, { cause: error });
    }
    throw error;
  }
}

/**
 * A channel opened at the first call, so that a failure to open it (a socket the permission
 * lists do not grant) rejects that call like any other gRPC failure.
 */
function lazyTransport(socket: string, timeoutMs: number) {
  let open: GrpcTransport | undefined;
  return {
    get: (): GrpcTransport =>
      open ??= createGrpcTransport({
        endpoint: `unix://${socket}`,
        flag: "CSI plugin",
        timeoutMs,
        connectRetryDelaysMs: [],
      }),
    close: async (): Promise<void> => {
      await open?.close();
    },
  };
}

/** A client of the registration socket at `socket` (upstream's `dial` timeout: 1 s per call). */
export function createRegistrationClient(
  socket: string,
  options: { timeoutMs?: number } = {},
): RegistrationClient {
  const t = lazyTransport(socket, options.timeoutMs ?? 10_000);
  return {
    async getInfo() {
      const info = await call(() =>
        t.get().unary(Registration.method.getInfo, {})
      );
      return {
        type: info.type,
        name: info.name,
        endpoint: info.endpoint,
        supportedVersions: [...info.supportedVersions],
      };
    },
    async notifyRegistrationStatus(registered, error) {
      await call(() =>
        t.get().unary(Registration.method.notifyRegistrationStatus, {
          pluginRegistered: registered,
          error: error ?? "",
        })
      );
    },
    close: t.close,
  };
}

function capability(c: CsiMountCapability) {
  return {
    accessMode: { mode: VolumeCapability_AccessMode_Mode[c.accessMode] },
    accessType: {
      case: "mount" as const,
      value: { fsType: c.fsType, mountFlags: c.mountFlags },
    },
  };
}

/**
 * A client of a driver's CSI socket at `socket`; calls time out after `timeoutMs` (upstream:
 * 15 s for `NodeGetInfo`, 2 min for stage and publish).
 */
export function createCsiNodeClient(
  socket: string,
  options: { timeoutMs?: number } = {},
): CsiNodeClient {
  const t = lazyTransport(socket, options.timeoutMs ?? 120_000);
  return {
    async nodeGetInfo() {
      const info = await call(() => t.get().unary(Node.method.nodeGetInfo, {}));
      return {
        nodeId: info.nodeId,
        maxVolumesPerNode: Number(info.maxVolumesPerNode),
        topology: { ...(info.accessibleTopology?.segments ?? {}) },
      };
    },
    async nodeGetCapabilities() {
      const got = await call(() =>
        t.get().unary(Node.method.nodeGetCapabilities, {})
      );
      const names = new Set<string>();
      for (const c of got.capabilities) {
        if (c.type.case === "rpc") {
          const name = NodeServiceCapability_RPC_Type[c.type.value.type];
          if (name) names.add(name);
        }
      }
      return names;
    },
    async nodeStageVolume(r) {
      await call(() =>
        t.get().unary(Node.method.nodeStageVolume, {
          volumeId: r.volumeId,
          publishContext: r.publishContext,
          stagingTargetPath: r.stagingTargetPath,
          volumeCapability: capability(r.capability),
          secrets: r.secrets,
          volumeContext: r.volumeContext,
        })
      );
    },
    async nodeUnstageVolume(volumeId, stagingTargetPath) {
      await call(() =>
        t.get().unary(Node.method.nodeUnstageVolume, {
          volumeId,
          stagingTargetPath,
        })
      );
    },
    async nodePublishVolume(r) {
      await call(() =>
        t.get().unary(Node.method.nodePublishVolume, {
          volumeId: r.volumeId,
          publishContext: r.publishContext,
          stagingTargetPath: r.stagingTargetPath,
          targetPath: r.targetPath,
          volumeCapability: capability(r.capability),
          readonly: r.readonly,
          secrets: r.secrets,
          volumeContext: r.volumeContext,
        })
      );
    },
    async nodeUnpublishVolume(volumeId, targetPath) {
      await call(() =>
        t.get().unary(Node.method.nodeUnpublishVolume, { volumeId, targetPath })
      );
    },
    close: t.close,
  };
}
