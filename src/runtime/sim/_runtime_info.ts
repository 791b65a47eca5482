/**
 * The runtime-wide RPCs of the simulated runtime: `Version`, `Status` (ready
 * as the scenario says), `UpdateRuntimeConfig` (keeps the pod CIDR), and the
 * RPCs containerd 1.6 does not implement, which answer Unimplemented with the
 * texts it uses.
 */

import { create } from "@bufbuild/protobuf";
import { UnimplementedError } from "../errors.ts";
import {
  type ContainerEventResponse,
  type StatusResponse,
  StatusResponseSchema,
  type UpdateRuntimeConfigResponse,
  UpdateRuntimeConfigResponseSchema,
  type VersionResponse,
  VersionResponseSchema,
} from "../gen/api_pb.ts";
import type { CriRequest } from "../types.ts";
import type { SimDeps, SimHandlers } from "./_deps.ts";

/** `runtime_name` the simulated runtime reports. */
export const SIM_RUNTIME_NAME = "kubelet.ts-sim";

function unimplemented(method: string): UnimplementedError {
  return new UnimplementedError(
    `unknown method ${method} for service runtime.v1.RuntimeService`,
  );
}

/** The runtime-wide RPCs; see the module comment. */
export class SimRuntimeInfo implements Partial<SimHandlers> {
  readonly #deps: SimDeps;
  #podCidr = "";

  constructor(deps: SimDeps) {
    this.#deps = deps;
  }

  /** The pod CIDR last set through `updateRuntimeConfig`. */
  get podCidr(): string {
    return this.#podCidr;
  }

  version(): VersionResponse {
    return create(VersionResponseSchema, {
      version: "0.1.0",
      runtimeName: SIM_RUNTIME_NAME,
      runtimeVersion: "0.1.0",
      runtimeApiVersion: "v1",
    });
  }

  status(): StatusResponse {
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

  updateRuntimeConfig(
    request: CriRequest<"updateRuntimeConfig">,
  ): UpdateRuntimeConfigResponse {
    this.#podCidr = request.runtimeConfig?.networkConfig?.podCidr ?? "";
    return create(UpdateRuntimeConfigResponseSchema);
  }

  checkpointContainer(): never {
    throw new UnimplementedError("method CheckpointContainer not implemented");
  }

  getContainerEvents(): AsyncIterable<ContainerEventResponse> {
    const error = unimplemented("GetContainerEvents");
    return {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
    };
  }

  listMetricDescriptors(): never {
    throw unimplemented("ListMetricDescriptors");
  }

  listPodSandboxMetrics(): never {
    throw unimplemented("ListPodSandboxMetrics");
  }

  runtimeConfig(): never {
    throw unimplemented("RuntimeConfig");
  }

  updatePodSandboxResources(): never {
    throw unimplemented("UpdatePodSandboxResources");
  }
}
