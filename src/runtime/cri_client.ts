/**
 * CRI client for real runtimes (containerd, CRI-O): implements
 * `RuntimeService` and `ImageService` over {@link createGrpcTransport}.
 * Each method is one gRPC call; errors are typed `RuntimeError`s.
 *
 * @module
 */

import type { Logger } from "../log/mod.ts";
import {
  ImageService as ImageServiceDesc,
  RuntimeService as RuntimeServiceDesc,
} from "./gen/api_pb.ts";
import type {
  AttachResponse,
  CheckpointContainerResponse,
  ContainerEventResponse,
  ContainerStatsResponse,
  ContainerStatusResponse,
  CreateContainerResponse,
  ExecResponse,
  ExecSyncResponse,
  ImageFsInfoResponse,
  ImageStatusResponse,
  ListContainersResponse,
  ListContainerStatsResponse,
  ListImagesResponse,
  ListMetricDescriptorsResponse,
  ListPodSandboxMetricsResponse,
  ListPodSandboxResponse,
  ListPodSandboxStatsResponse,
  PodSandboxStatsResponse,
  PodSandboxStatusResponse,
  PortForwardResponse,
  PullImageResponse,
  RemoveContainerResponse,
  RemoveImageResponse,
  RemovePodSandboxResponse,
  ReopenContainerLogResponse,
  RunPodSandboxResponse,
  RuntimeConfigResponse,
  StartContainerResponse,
  StatusResponse,
  StopContainerResponse,
  StopPodSandboxResponse,
  UpdateContainerResourcesResponse,
  UpdatePodSandboxResourcesResponse,
  UpdateRuntimeConfigResponse,
  VersionResponse,
} from "./gen/api_pb.ts";
import { createGrpcTransport, type GrpcTransport } from "./grpc_transport.ts";
import type {
  AttachRequestInit,
  CallOptions,
  CheckpointContainerRequestInit,
  ContainerStatsRequestInit,
  ContainerStatusRequestInit,
  CreateContainerRequestInit,
  CriRuntime,
  ExecRequestInit,
  ExecSyncRequestInit,
  GetEventsRequestInit,
  ImageFsInfoRequestInit,
  ImageStatusRequestInit,
  ListContainersRequestInit,
  ListContainerStatsRequestInit,
  ListImagesRequestInit,
  ListMetricDescriptorsRequestInit,
  ListPodSandboxMetricsRequestInit,
  ListPodSandboxRequestInit,
  ListPodSandboxStatsRequestInit,
  PodSandboxStatsRequestInit,
  PodSandboxStatusRequestInit,
  PortForwardRequestInit,
  PullImageRequestInit,
  RemoveContainerRequestInit,
  RemoveImageRequestInit,
  RemovePodSandboxRequestInit,
  ReopenContainerLogRequestInit,
  RunPodSandboxRequestInit,
  RuntimeConfigRequestInit,
  StartContainerRequestInit,
  StatusRequestInit,
  StopContainerRequestInit,
  StopPodSandboxRequestInit,
  UpdateContainerResourcesRequestInit,
  UpdatePodSandboxResourcesRequestInit,
  UpdateRuntimeConfigRequestInit,
  VersionRequestInit,
} from "./types.ts";

const RUNTIME = RuntimeServiceDesc.method;
const IMAGES = ImageServiceDesc.method;

/** Options for {@link createCriRuntime}. */
export interface CriRuntimeOptions {
  /** `--container-runtime-endpoint`: `unix:///path`, `unix:/path` or `/path`. */
  endpoint: string;
  /** `--image-service-endpoint`; defaults to `endpoint`. */
  imageEndpoint?: string;
  /** Default per-call deadline in ms (`--runtime-request-timeout`, default 2m). */
  timeoutMs?: number;
  /** Waits between re-sends when the socket is missing or refusing (default 20, 50, 100, 200 ms). */
  connectRetryDelaysMs?: readonly number[];
  logger?: Logger;
}

/**
 * Creates a lazy CRI client; no connection is made until the first call.
 * Throws a TypeError naming `--container-runtime-endpoint` or
 * `--image-service-endpoint` for an endpoint that is not a unix socket.
 */
export function createCriRuntime(options: CriRuntimeOptions): CriRuntime {
  const common = {
    ...(options.timeoutMs === undefined
      ? {}
      : { timeoutMs: options.timeoutMs }),
    ...(options.connectRetryDelaysMs === undefined
      ? {}
      : { connectRetryDelaysMs: options.connectRetryDelaysMs }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  };
  const runtime = createGrpcTransport({
    endpoint: options.endpoint,
    flag: "--container-runtime-endpoint",
    ...common,
  });
  const imageEndpoint = options.imageEndpoint?.trim();
  if (!imageEndpoint) return new CriRuntimeClient(runtime, runtime);
  let images: GrpcTransport;
  try {
    images = createGrpcTransport({
      endpoint: imageEndpoint,
      flag: "--image-service-endpoint",
      ...common,
    });
  } catch (error) {
    void runtime.close();
    throw error;
  }
  if (images.socketPath === runtime.socketPath) {
    void images.close();
    images = runtime;
  }
  return new CriRuntimeClient(runtime, images);
}

/** gRPC-backed {@link CriRuntime}. */
class CriRuntimeClient implements CriRuntime {
  #runtime: GrpcTransport;
  #images: GrpcTransport;

  constructor(runtime: GrpcTransport, images: GrpcTransport) {
    this.#runtime = runtime;
    this.#images = images;
  }

  version(
    request: VersionRequestInit,
    options?: CallOptions,
  ): Promise<VersionResponse> {
    return this.#runtime.unary(RUNTIME.version, request, options);
  }

  runPodSandbox(
    request: RunPodSandboxRequestInit,
    options?: CallOptions,
  ): Promise<RunPodSandboxResponse> {
    return this.#runtime.unary(RUNTIME.runPodSandbox, request, options);
  }

  stopPodSandbox(
    request: StopPodSandboxRequestInit,
    options?: CallOptions,
  ): Promise<StopPodSandboxResponse> {
    return this.#runtime.unary(RUNTIME.stopPodSandbox, request, options);
  }

  removePodSandbox(
    request: RemovePodSandboxRequestInit,
    options?: CallOptions,
  ): Promise<RemovePodSandboxResponse> {
    return this.#runtime.unary(RUNTIME.removePodSandbox, request, options);
  }

  podSandboxStatus(
    request: PodSandboxStatusRequestInit,
    options?: CallOptions,
  ): Promise<PodSandboxStatusResponse> {
    return this.#runtime.unary(RUNTIME.podSandboxStatus, request, options);
  }

  listPodSandbox(
    request: ListPodSandboxRequestInit,
    options?: CallOptions,
  ): Promise<ListPodSandboxResponse> {
    return this.#runtime.unary(RUNTIME.listPodSandbox, request, options);
  }

  createContainer(
    request: CreateContainerRequestInit,
    options?: CallOptions,
  ): Promise<CreateContainerResponse> {
    return this.#runtime.unary(RUNTIME.createContainer, request, options);
  }

  startContainer(
    request: StartContainerRequestInit,
    options?: CallOptions,
  ): Promise<StartContainerResponse> {
    return this.#runtime.unary(RUNTIME.startContainer, request, options);
  }

  stopContainer(
    request: StopContainerRequestInit,
    options?: CallOptions,
  ): Promise<StopContainerResponse> {
    return this.#runtime.unary(RUNTIME.stopContainer, request, options);
  }

  removeContainer(
    request: RemoveContainerRequestInit,
    options?: CallOptions,
  ): Promise<RemoveContainerResponse> {
    return this.#runtime.unary(RUNTIME.removeContainer, request, options);
  }

  listContainers(
    request: ListContainersRequestInit,
    options?: CallOptions,
  ): Promise<ListContainersResponse> {
    return this.#runtime.unary(RUNTIME.listContainers, request, options);
  }

  containerStatus(
    request: ContainerStatusRequestInit,
    options?: CallOptions,
  ): Promise<ContainerStatusResponse> {
    return this.#runtime.unary(RUNTIME.containerStatus, request, options);
  }

  updateContainerResources(
    request: UpdateContainerResourcesRequestInit,
    options?: CallOptions,
  ): Promise<UpdateContainerResourcesResponse> {
    return this.#runtime.unary(
      RUNTIME.updateContainerResources,
      request,
      options,
    );
  }

  reopenContainerLog(
    request: ReopenContainerLogRequestInit,
    options?: CallOptions,
  ): Promise<ReopenContainerLogResponse> {
    return this.#runtime.unary(RUNTIME.reopenContainerLog, request, options);
  }

  execSync(
    request: ExecSyncRequestInit,
    options?: CallOptions,
  ): Promise<ExecSyncResponse> {
    return this.#runtime.unary(RUNTIME.execSync, request, options);
  }

  exec(
    request: ExecRequestInit,
    options?: CallOptions,
  ): Promise<ExecResponse> {
    return this.#runtime.unary(RUNTIME.exec, request, options);
  }

  attach(
    request: AttachRequestInit,
    options?: CallOptions,
  ): Promise<AttachResponse> {
    return this.#runtime.unary(RUNTIME.attach, request, options);
  }

  portForward(
    request: PortForwardRequestInit,
    options?: CallOptions,
  ): Promise<PortForwardResponse> {
    return this.#runtime.unary(RUNTIME.portForward, request, options);
  }

  containerStats(
    request: ContainerStatsRequestInit,
    options?: CallOptions,
  ): Promise<ContainerStatsResponse> {
    return this.#runtime.unary(RUNTIME.containerStats, request, options);
  }

  listContainerStats(
    request: ListContainerStatsRequestInit,
    options?: CallOptions,
  ): Promise<ListContainerStatsResponse> {
    return this.#runtime.unary(RUNTIME.listContainerStats, request, options);
  }

  podSandboxStats(
    request: PodSandboxStatsRequestInit,
    options?: CallOptions,
  ): Promise<PodSandboxStatsResponse> {
    return this.#runtime.unary(RUNTIME.podSandboxStats, request, options);
  }

  listPodSandboxStats(
    request: ListPodSandboxStatsRequestInit,
    options?: CallOptions,
  ): Promise<ListPodSandboxStatsResponse> {
    return this.#runtime.unary(RUNTIME.listPodSandboxStats, request, options);
  }

  updateRuntimeConfig(
    request: UpdateRuntimeConfigRequestInit,
    options?: CallOptions,
  ): Promise<UpdateRuntimeConfigResponse> {
    return this.#runtime.unary(RUNTIME.updateRuntimeConfig, request, options);
  }

  status(
    request: StatusRequestInit,
    options?: CallOptions,
  ): Promise<StatusResponse> {
    return this.#runtime.unary(RUNTIME.status, request, options);
  }

  checkpointContainer(
    request: CheckpointContainerRequestInit,
    options?: CallOptions,
  ): Promise<CheckpointContainerResponse> {
    return this.#runtime.unary(RUNTIME.checkpointContainer, request, options);
  }

  getContainerEvents(
    request: GetEventsRequestInit,
    options?: CallOptions,
  ): AsyncIterable<ContainerEventResponse> {
    return this.#runtime.serverStream(
      RUNTIME.getContainerEvents,
      request,
      options,
    );
  }

  listMetricDescriptors(
    request: ListMetricDescriptorsRequestInit,
    options?: CallOptions,
  ): Promise<ListMetricDescriptorsResponse> {
    return this.#runtime.unary(RUNTIME.listMetricDescriptors, request, options);
  }

  listPodSandboxMetrics(
    request: ListPodSandboxMetricsRequestInit,
    options?: CallOptions,
  ): Promise<ListPodSandboxMetricsResponse> {
    return this.#runtime.unary(RUNTIME.listPodSandboxMetrics, request, options);
  }

  runtimeConfig(
    request: RuntimeConfigRequestInit,
    options?: CallOptions,
  ): Promise<RuntimeConfigResponse> {
    return this.#runtime.unary(RUNTIME.runtimeConfig, request, options);
  }

  updatePodSandboxResources(
    request: UpdatePodSandboxResourcesRequestInit,
    options?: CallOptions,
  ): Promise<UpdatePodSandboxResourcesResponse> {
    return this.#runtime.unary(
      RUNTIME.updatePodSandboxResources,
      request,
      options,
    );
  }

  listImages(
    request: ListImagesRequestInit,
    options?: CallOptions,
  ): Promise<ListImagesResponse> {
    return this.#images.unary(IMAGES.listImages, request, options);
  }

  imageStatus(
    request: ImageStatusRequestInit,
    options?: CallOptions,
  ): Promise<ImageStatusResponse> {
    return this.#images.unary(IMAGES.imageStatus, request, options);
  }

  pullImage(
    request: PullImageRequestInit,
    options?: CallOptions,
  ): Promise<PullImageResponse> {
    return this.#images.unary(IMAGES.pullImage, request, options);
  }

  removeImage(
    request: RemoveImageRequestInit,
    options?: CallOptions,
  ): Promise<RemoveImageResponse> {
    return this.#images.unary(IMAGES.removeImage, request, options);
  }

  imageFsInfo(
    request: ImageFsInfoRequestInit,
    options?: CallOptions,
  ): Promise<ImageFsInfoResponse> {
    return this.#images.unary(IMAGES.imageFsInfo, request, options);
  }

  async close(): Promise<void> {
    await this.#runtime.close();
    if (this.#images !== this.#runtime) await this.#images.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
