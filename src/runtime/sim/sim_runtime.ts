/**
 * The simulated CRI runtime: `RuntimeService` + `ImageService` over in-memory
 * state. Layers: `_base.ts` (call log, injected errors, clock waits) →
 * `_pods.ts` (sandbox/container lifecycle) → `_queries.ts` (status, lists,
 * exec, stats) → this file (version, status, images, RPCs containerd 1.6
 * does not implement, which answer Unimplemented as it does).
 */

import { create } from "@bufbuild/protobuf";
import { type Clock, systemClock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { RuntimeError, UnimplementedError } from "../errors.ts";
import {
  type CheckpointContainerResponse,
  type ContainerEventResponse,
  type ImageFsInfoResponse,
  ImageFsInfoResponseSchema,
  type ImageStatusResponse,
  ImageStatusResponseSchema,
  type ListImagesResponse,
  ListImagesResponseSchema,
  type ListMetricDescriptorsResponse,
  type ListPodSandboxMetricsResponse,
  type PullImageResponse,
  PullImageResponseSchema,
  type RemoveImageResponse,
  RemoveImageResponseSchema,
  type RuntimeConfigResponse,
  type StatusResponse,
  StatusResponseSchema,
  type UpdatePodSandboxResourcesResponse,
  type UpdateRuntimeConfigResponse,
  UpdateRuntimeConfigResponseSchema,
  type VersionResponse,
  VersionResponseSchema,
} from "../gen/api_pb.ts";
import type { CallOptions, CriRequest, CriRuntime } from "../types.ts";
import { SimQueries } from "./_queries.ts";
import { toImage } from "./_convert.ts";
import type { SimScenario } from "./scenario.ts";

/** Options of {@linkcode createSimRuntime}. */
export interface SimRuntimeOptions {
  /** Time source for delays, exits and timestamps (default: the system clock). */
  clock?: Clock;
  /** Scripted behaviour (default: every image pulls, containers follow their command). */
  scenario?: SimScenario;
  logger?: Logger;
}

/** `runtime_name` the simulated runtime reports. */
export const SIM_RUNTIME_NAME = "kubelet.ts-sim";
const UNKNOWN = 2;

function unimplemented(method: string): UnimplementedError {
  return new UnimplementedError(
    `unknown method ${method} for service runtime.v1.RuntimeService`,
  );
}

/** The simulated runtime; build it with {@linkcode createSimRuntime}. */
export class SimRuntime extends SimQueries implements CriRuntime {
  #podCidr = "";

  constructor(options: SimRuntimeOptions = {}) {
    super(options.clock ?? systemClock, options.scenario ?? {}, options.logger);
  }

  /** The pod CIDR last set through `updateRuntimeConfig`. */
  get podCidr(): string {
    return this.#podCidr;
  }

  async version(
    _request: CriRequest<"version">,
    options?: CallOptions,
  ): Promise<VersionResponse> {
    await this.enter("version", options);
    return create(VersionResponseSchema, {
      version: "0.1.0",
      runtimeName: SIM_RUNTIME_NAME,
      runtimeVersion: "0.1.0",
      runtimeApiVersion: "v1",
    });
  }

  async status(
    _request: CriRequest<"status">,
    options?: CallOptions,
  ): Promise<StatusResponse> {
    await this.enter("status", options);
    const runtimeReady = this.scenario.runtimeReady ?? true;
    const networkReady = this.scenario.networkReady ?? true;
    return create(StatusResponseSchema, {
      status: {
        conditions: [
          {
            type: "RuntimeReady",
            status: runtimeReady,
            ...(runtimeReady ? {} : {
              reason: "SimRuntimeNotReady",
              message: "simulated runtime is not ready",
            }),
          },
          {
            type: "NetworkReady",
            status: networkReady,
            ...(networkReady ? {} : {
              reason: "NetworkPluginNotReady",
              message:
                "Network plugin returns error: cni plugin not initialized",
            }),
          },
        ],
      },
    });
  }

  async updateRuntimeConfig(
    request: CriRequest<"updateRuntimeConfig">,
    options?: CallOptions,
  ): Promise<UpdateRuntimeConfigResponse> {
    await this.enter("updateRuntimeConfig", options);
    this.#podCidr = request.runtimeConfig?.networkConfig?.podCidr ?? "";
    return create(UpdateRuntimeConfigResponseSchema);
  }

  async checkpointContainer(
    _request: CriRequest<"checkpointContainer">,
    options?: CallOptions,
  ): Promise<CheckpointContainerResponse> {
    await this.enter("checkpointContainer", options);
    throw new UnimplementedError("method CheckpointContainer not implemented");
  }

  getContainerEvents(
    _request: CriRequest<"getContainerEvents">,
    options?: CallOptions,
  ): AsyncIterable<ContainerEventResponse> {
    this.enterSync("getContainerEvents", options);
    const error = unimplemented("GetContainerEvents");
    return {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
    };
  }

  async listMetricDescriptors(
    _request: CriRequest<"listMetricDescriptors">,
    options?: CallOptions,
  ): Promise<ListMetricDescriptorsResponse> {
    await this.enter("listMetricDescriptors", options);
    throw unimplemented("ListMetricDescriptors");
  }

  async listPodSandboxMetrics(
    _request: CriRequest<"listPodSandboxMetrics">,
    options?: CallOptions,
  ): Promise<ListPodSandboxMetricsResponse> {
    await this.enter("listPodSandboxMetrics", options);
    throw unimplemented("ListPodSandboxMetrics");
  }

  async runtimeConfig(
    _request: CriRequest<"runtimeConfig">,
    options?: CallOptions,
  ): Promise<RuntimeConfigResponse> {
    await this.enter("runtimeConfig", options);
    throw unimplemented("RuntimeConfig");
  }

  async updatePodSandboxResources(
    _request: CriRequest<"updatePodSandboxResources">,
    options?: CallOptions,
  ): Promise<UpdatePodSandboxResourcesResponse> {
    await this.enter("updatePodSandboxResources", options);
    throw unimplemented("UpdatePodSandboxResources");
  }

  // ImageService

  async listImages(
    _request: CriRequest<"listImages">,
    options?: CallOptions,
  ): Promise<ListImagesResponse> {
    await this.enter("listImages", options);
    // containerd 1.6 ignores ListImagesRequest.filter and lists every image.
    const selected = this.imageStore.list();
    return create(ListImagesResponseSchema, { images: selected.map(toImage) });
  }

  async imageStatus(
    request: CriRequest<"imageStatus">,
    options?: CallOptions,
  ): Promise<ImageStatusResponse> {
    await this.enter("imageStatus", options);
    const image = this.imageStore.resolve(request.image?.image);
    return create(
      ImageStatusResponseSchema,
      image ? { image: toImage(image) } : {},
    );
  }

  async pullImage(
    request: CriRequest<"pullImage">,
    options?: CallOptions,
  ): Promise<PullImageResponse> {
    await this.enter("pullImage", options);
    const ref = request.image?.image ?? "";
    if (!ref) {
      throw new RuntimeError(UNKNOWN, "image reference must not be empty");
    }
    await this.wait(this.imageStore.behavior(ref).pullDelayMs ?? 0, options);
    this.imageStore.checkPull(ref, request.auth);
    const image = this.imageStore.add(ref);
    return create(PullImageResponseSchema, { imageRef: image.id });
  }

  async removeImage(
    request: CriRequest<"removeImage">,
    options?: CallOptions,
  ): Promise<RemoveImageResponse> {
    await this.enter("removeImage", options);
    this.imageStore.remove(request.image?.image);
    return create(RemoveImageResponseSchema);
  }

  async imageFsInfo(
    _request: CriRequest<"imageFsInfo">,
    options?: CallOptions,
  ): Promise<ImageFsInfoResponse> {
    await this.enter("imageFsInfo", options);
    const images = this.imageStore.list();
    return create(ImageFsInfoResponseSchema, {
      imageFilesystems: [{
        timestamp: BigInt(this.clock.now()) * 1_000_000n,
        fsId: {
          mountpoint:
            "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs",
        },
        usedBytes: { value: BigInt(this.imageStore.usedBytes()) },
        inodesUsed: { value: BigInt(images.length * 64) },
      }],
    });
  }
}

/**
 * Builds a simulated runtime implementing both CRI services.
 *
 * @example
 * ```ts
 * import { createSimRuntime } from "./mod.ts";
 * const runtime = createSimRuntime({ scenario: { containers: { app: { exitAfterMs: 10, exitCode: 1 } } } });
 * const v = await runtime.version({ version: "0.1.0" });
 * console.assert(v.runtimeName === "kubelet.ts-sim");
 * ```
 */
export function createSimRuntime(options: SimRuntimeOptions = {}): SimRuntime {
  return new SimRuntime(options);
}
