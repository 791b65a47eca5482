/**
 * The runtime-wide RPCs of the simulated runtime: `Version`, `Status` (ready
 * as the scenario says), `UpdateRuntimeConfig` (keeps the pod CIDR), and the
 * RPCs containerd 1.6 does not implement, which answer Unimplemented with the
 * texts it uses.
 */

import { create } from "@bufbuild/protobuf";
import { UnimplementedError } from "../errors.ts";
import {
  type CheckpointContainerResponse,
  type ContainerEventResponse,
  type ListMetricDescriptorsResponse,
  type ListPodSandboxMetricsResponse,
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
import type { SimDeps } from "./_deps.ts";

/** `runtime_name` the simulated runtime reports. */
export const SIM_RUNTIME_NAME = "kubelet.ts-sim";

function unimplemented(method: string): UnimplementedError {
  return new UnimplementedError(
    `unknown method ${method} for service runtime.v1.RuntimeService`,
  );
}

/** The runtime-wide RPCs; see the module comment. */
export class SimRuntimeInfo implements Partial<CriRuntime> {
  readonly #deps: SimDeps;
  #podCidr = "";

  constructor(deps: SimDeps) {
    this.#deps = deps;
  }

  /** The pod CIDR last set through `updateRuntimeConfig`. */
  get podCidr(): string {
    return this.#podCidr;
  }

  async version(
    _request: CriRequest<"version">,
    options?: CallOptions,
  ): Promise<VersionResponse> {
    await this.#deps.calls.enter("version", options);
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
    await this.#deps.calls.enter("status", options);
    const runtimeReady = this.#deps.scenario.runtimeReady ?? true;
    const networkReady = this.#deps.scenario.networkReady ?? true;
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
    await this.#deps.calls.enter("updateRuntimeConfig", options);
    this.#podCidr = request.runtimeConfig?.networkConfig?.podCidr ?? "";
    return create(UpdateRuntimeConfigResponseSchema);
  }

  async checkpointContainer(
    _request: CriRequest<"checkpointContainer">,
    options?: CallOptions,
  ): Promise<CheckpointContainerResponse> {
    await this.#deps.calls.enter("checkpointContainer", options);
    throw new UnimplementedError("method CheckpointContainer not implemented");
  }

  getContainerEvents(
    _request: CriRequest<"getContainerEvents">,
    options?: CallOptions,
  ): AsyncIterable<ContainerEventResponse> {
    this.#deps.calls.enterSync("getContainerEvents", options);
    const error = unimplemented("GetContainerEvents");
    return {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
    };
  }

  async listMetricDescriptors(
    _request: CriRequest<"listMetricDescriptors">,
    options?: CallOptions,
  ): Promise<ListMetricDescriptorsResponse> {
    await this.#deps.calls.enter("listMetricDescriptors", options);
    throw unimplemented("ListMetricDescriptors");
  }

  async listPodSandboxMetrics(
    _request: CriRequest<"listPodSandboxMetrics">,
    options?: CallOptions,
  ): Promise<ListPodSandboxMetricsResponse> {
    await this.#deps.calls.enter("listPodSandboxMetrics", options);
    throw unimplemented("ListPodSandboxMetrics");
  }

  async runtimeConfig(
    _request: CriRequest<"runtimeConfig">,
    options?: CallOptions,
  ): Promise<RuntimeConfigResponse> {
    await this.#deps.calls.enter("runtimeConfig", options);
    throw unimplemented("RuntimeConfig");
  }

  async updatePodSandboxResources(
    _request: CriRequest<"updatePodSandboxResources">,
    options?: CallOptions,
  ): Promise<UpdatePodSandboxResourcesResponse> {
    await this.#deps.calls.enter("updatePodSandboxResources", options);
    throw unimplemented("UpdatePodSandboxResources");
  }
}
