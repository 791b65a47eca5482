/**
 * The CRI seam: `RuntimeService` and `ImageService` mirror CRI `runtime.v1`
 * one method per RPC (camelCase). Requests are plain-object init shapes of the
 * generated messages (every field optional, nested messages as plain objects);
 * responses are the generated message types.
 *
 * Implementations: the gRPC client (`createCriRuntime`) and the simulated
 * runtime (`src/runtime/sim/`). Failures reject with `RuntimeError` (see
 * `errors.ts`).
 *
 * @module
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  AttachRequestSchema,
  AttachResponse,
  CheckpointContainerRequestSchema,
  CheckpointContainerResponse,
  ContainerEventResponse,
  ContainerStatsRequestSchema,
  ContainerStatsResponse,
  ContainerStatusRequestSchema,
  ContainerStatusResponse,
  CreateContainerRequestSchema,
  CreateContainerResponse,
  ExecRequestSchema,
  ExecResponse,
  ExecSyncRequestSchema,
  ExecSyncResponse,
  GetEventsRequestSchema,
  ImageFsInfoRequestSchema,
  ImageFsInfoResponse,
  ImageStatusRequestSchema,
  ImageStatusResponse,
  ListContainersRequestSchema,
  ListContainersResponse,
  ListContainerStatsRequestSchema,
  ListContainerStatsResponse,
  ListImagesRequestSchema,
  ListImagesResponse,
  ListMetricDescriptorsRequestSchema,
  ListMetricDescriptorsResponse,
  ListPodSandboxMetricsRequestSchema,
  ListPodSandboxMetricsResponse,
  ListPodSandboxRequestSchema,
  ListPodSandboxResponse,
  ListPodSandboxStatsRequestSchema,
  ListPodSandboxStatsResponse,
  PodSandboxStatsRequestSchema,
  PodSandboxStatsResponse,
  PodSandboxStatusRequestSchema,
  PodSandboxStatusResponse,
  PortForwardRequestSchema,
  PortForwardResponse,
  PullImageRequestSchema,
  PullImageResponse,
  RemoveContainerRequestSchema,
  RemoveContainerResponse,
  RemoveImageRequestSchema,
  RemoveImageResponse,
  RemovePodSandboxRequestSchema,
  RemovePodSandboxResponse,
  ReopenContainerLogRequestSchema,
  ReopenContainerLogResponse,
  RunPodSandboxRequestSchema,
  RunPodSandboxResponse,
  RuntimeConfigRequestSchema,
  RuntimeConfigResponse,
  StartContainerRequestSchema,
  StartContainerResponse,
  StatusRequestSchema,
  StatusResponse,
  StopContainerRequestSchema,
  StopContainerResponse,
  StopPodSandboxRequestSchema,
  StopPodSandboxResponse,
  UpdateContainerResourcesRequestSchema,
  UpdateContainerResourcesResponse,
  UpdatePodSandboxResourcesRequestSchema,
  UpdatePodSandboxResourcesResponse,
  UpdateRuntimeConfigRequestSchema,
  UpdateRuntimeConfigResponse,
  VersionRequestSchema,
  VersionResponse,
} from "./gen/api_pb.ts";

/** Per-call options accepted by every runtime method. */
export interface CallOptions {
  /** Aborts the call; the promise rejects with a `CanceledError`. */
  signal?: AbortSignal;
  /**
   * Deadline for this call in milliseconds, overriding the client default
   * (`--runtime-request-timeout`, 2m). Expiry rejects with
   * `DeadlineExceededError`.
   */
  timeoutMs?: number;
}

/** Plain-object init shape of `AttachRequest`. */
export type AttachRequestInit = MessageInitShape<typeof AttachRequestSchema>;
/** Plain-object init shape of `CheckpointContainerRequest`. */
export type CheckpointContainerRequestInit = MessageInitShape<
  typeof CheckpointContainerRequestSchema
>;
/** Plain-object init shape of `ContainerStatsRequest`. */
export type ContainerStatsRequestInit = MessageInitShape<
  typeof ContainerStatsRequestSchema
>;
/** Plain-object init shape of `ContainerStatusRequest`. */
export type ContainerStatusRequestInit = MessageInitShape<
  typeof ContainerStatusRequestSchema
>;
/** Plain-object init shape of `CreateContainerRequest`. */
export type CreateContainerRequestInit = MessageInitShape<
  typeof CreateContainerRequestSchema
>;
/** Plain-object init shape of `ExecRequest`. */
export type ExecRequestInit = MessageInitShape<typeof ExecRequestSchema>;
/** Plain-object init shape of `ExecSyncRequest`. */
export type ExecSyncRequestInit = MessageInitShape<
  typeof ExecSyncRequestSchema
>;
/** Plain-object init shape of `GetEventsRequest`. */
export type GetEventsRequestInit = MessageInitShape<
  typeof GetEventsRequestSchema
>;
/** Plain-object init shape of `ImageFsInfoRequest`. */
export type ImageFsInfoRequestInit = MessageInitShape<
  typeof ImageFsInfoRequestSchema
>;
/** Plain-object init shape of `ImageStatusRequest`. */
export type ImageStatusRequestInit = MessageInitShape<
  typeof ImageStatusRequestSchema
>;
/** Plain-object init shape of `ListContainerStatsRequest`. */
export type ListContainerStatsRequestInit = MessageInitShape<
  typeof ListContainerStatsRequestSchema
>;
/** Plain-object init shape of `ListContainersRequest`. */
export type ListContainersRequestInit = MessageInitShape<
  typeof ListContainersRequestSchema
>;
/** Plain-object init shape of `ListImagesRequest`. */
export type ListImagesRequestInit = MessageInitShape<
  typeof ListImagesRequestSchema
>;
/** Plain-object init shape of `ListMetricDescriptorsRequest`. */
export type ListMetricDescriptorsRequestInit = MessageInitShape<
  typeof ListMetricDescriptorsRequestSchema
>;
/** Plain-object init shape of `ListPodSandboxMetricsRequest`. */
export type ListPodSandboxMetricsRequestInit = MessageInitShape<
  typeof ListPodSandboxMetricsRequestSchema
>;
/** Plain-object init shape of `ListPodSandboxRequest`. */
export type ListPodSandboxRequestInit = MessageInitShape<
  typeof ListPodSandboxRequestSchema
>;
/** Plain-object init shape of `ListPodSandboxStatsRequest`. */
export type ListPodSandboxStatsRequestInit = MessageInitShape<
  typeof ListPodSandboxStatsRequestSchema
>;
/** Plain-object init shape of `PodSandboxStatsRequest`. */
export type PodSandboxStatsRequestInit = MessageInitShape<
  typeof PodSandboxStatsRequestSchema
>;
/** Plain-object init shape of `PodSandboxStatusRequest`. */
export type PodSandboxStatusRequestInit = MessageInitShape<
  typeof PodSandboxStatusRequestSchema
>;
/** Plain-object init shape of `PortForwardRequest`. */
export type PortForwardRequestInit = MessageInitShape<
  typeof PortForwardRequestSchema
>;
/** Plain-object init shape of `PullImageRequest`. */
export type PullImageRequestInit = MessageInitShape<
  typeof PullImageRequestSchema
>;
/** Plain-object init shape of `RemoveContainerRequest`. */
export type RemoveContainerRequestInit = MessageInitShape<
  typeof RemoveContainerRequestSchema
>;
/** Plain-object init shape of `RemoveImageRequest`. */
export type RemoveImageRequestInit = MessageInitShape<
  typeof RemoveImageRequestSchema
>;
/** Plain-object init shape of `RemovePodSandboxRequest`. */
export type RemovePodSandboxRequestInit = MessageInitShape<
  typeof RemovePodSandboxRequestSchema
>;
/** Plain-object init shape of `ReopenContainerLogRequest`. */
export type ReopenContainerLogRequestInit = MessageInitShape<
  typeof ReopenContainerLogRequestSchema
>;
/** Plain-object init shape of `RunPodSandboxRequest`. */
export type RunPodSandboxRequestInit = MessageInitShape<
  typeof RunPodSandboxRequestSchema
>;
/** Plain-object init shape of `RuntimeConfigRequest`. */
export type RuntimeConfigRequestInit = MessageInitShape<
  typeof RuntimeConfigRequestSchema
>;
/** Plain-object init shape of `StartContainerRequest`. */
export type StartContainerRequestInit = MessageInitShape<
  typeof StartContainerRequestSchema
>;
/** Plain-object init shape of `StatusRequest`. */
export type StatusRequestInit = MessageInitShape<typeof StatusRequestSchema>;
/** Plain-object init shape of `StopContainerRequest`. */
export type StopContainerRequestInit = MessageInitShape<
  typeof StopContainerRequestSchema
>;
/** Plain-object init shape of `StopPodSandboxRequest`. */
export type StopPodSandboxRequestInit = MessageInitShape<
  typeof StopPodSandboxRequestSchema
>;
/** Plain-object init shape of `UpdateContainerResourcesRequest`. */
export type UpdateContainerResourcesRequestInit = MessageInitShape<
  typeof UpdateContainerResourcesRequestSchema
>;
/** Plain-object init shape of `UpdatePodSandboxResourcesRequest`. */
export type UpdatePodSandboxResourcesRequestInit = MessageInitShape<
  typeof UpdatePodSandboxResourcesRequestSchema
>;
/** Plain-object init shape of `UpdateRuntimeConfigRequest`. */
export type UpdateRuntimeConfigRequestInit = MessageInitShape<
  typeof UpdateRuntimeConfigRequestSchema
>;
/** Plain-object init shape of `VersionRequest`. */
export type VersionRequestInit = MessageInitShape<typeof VersionRequestSchema>;

/** CRI `runtime.v1.RuntimeService`, one method per RPC. */
export interface RuntimeService {
  version(
    request: VersionRequestInit,
    options?: CallOptions,
  ): Promise<VersionResponse>;
  runPodSandbox(
    request: RunPodSandboxRequestInit,
    options?: CallOptions,
  ): Promise<RunPodSandboxResponse>;
  stopPodSandbox(
    request: StopPodSandboxRequestInit,
    options?: CallOptions,
  ): Promise<StopPodSandboxResponse>;
  removePodSandbox(
    request: RemovePodSandboxRequestInit,
    options?: CallOptions,
  ): Promise<RemovePodSandboxResponse>;
  podSandboxStatus(
    request: PodSandboxStatusRequestInit,
    options?: CallOptions,
  ): Promise<PodSandboxStatusResponse>;
  listPodSandbox(
    request: ListPodSandboxRequestInit,
    options?: CallOptions,
  ): Promise<ListPodSandboxResponse>;
  createContainer(
    request: CreateContainerRequestInit,
    options?: CallOptions,
  ): Promise<CreateContainerResponse>;
  startContainer(
    request: StartContainerRequestInit,
    options?: CallOptions,
  ): Promise<StartContainerResponse>;
  stopContainer(
    request: StopContainerRequestInit,
    options?: CallOptions,
  ): Promise<StopContainerResponse>;
  removeContainer(
    request: RemoveContainerRequestInit,
    options?: CallOptions,
  ): Promise<RemoveContainerResponse>;
  listContainers(
    request: ListContainersRequestInit,
    options?: CallOptions,
  ): Promise<ListContainersResponse>;
  containerStatus(
    request: ContainerStatusRequestInit,
    options?: CallOptions,
  ): Promise<ContainerStatusResponse>;
  updateContainerResources(
    request: UpdateContainerResourcesRequestInit,
    options?: CallOptions,
  ): Promise<UpdateContainerResourcesResponse>;
  reopenContainerLog(
    request: ReopenContainerLogRequestInit,
    options?: CallOptions,
  ): Promise<ReopenContainerLogResponse>;
  execSync(
    request: ExecSyncRequestInit,
    options?: CallOptions,
  ): Promise<ExecSyncResponse>;
  exec(
    request: ExecRequestInit,
    options?: CallOptions,
  ): Promise<ExecResponse>;
  attach(
    request: AttachRequestInit,
    options?: CallOptions,
  ): Promise<AttachResponse>;
  portForward(
    request: PortForwardRequestInit,
    options?: CallOptions,
  ): Promise<PortForwardResponse>;
  containerStats(
    request: ContainerStatsRequestInit,
    options?: CallOptions,
  ): Promise<ContainerStatsResponse>;
  listContainerStats(
    request: ListContainerStatsRequestInit,
    options?: CallOptions,
  ): Promise<ListContainerStatsResponse>;
  podSandboxStats(
    request: PodSandboxStatsRequestInit,
    options?: CallOptions,
  ): Promise<PodSandboxStatsResponse>;
  listPodSandboxStats(
    request: ListPodSandboxStatsRequestInit,
    options?: CallOptions,
  ): Promise<ListPodSandboxStatsResponse>;
  updateRuntimeConfig(
    request: UpdateRuntimeConfigRequestInit,
    options?: CallOptions,
  ): Promise<UpdateRuntimeConfigResponse>;
  status(
    request: StatusRequestInit,
    options?: CallOptions,
  ): Promise<StatusResponse>;
  checkpointContainer(
    request: CheckpointContainerRequestInit,
    options?: CallOptions,
  ): Promise<CheckpointContainerResponse>;
  /** Server-streaming: yields events until the signal aborts or the stream ends. */
  getContainerEvents(
    request: GetEventsRequestInit,
    options?: CallOptions,
  ): AsyncIterable<ContainerEventResponse>;
  listMetricDescriptors(
    request: ListMetricDescriptorsRequestInit,
    options?: CallOptions,
  ): Promise<ListMetricDescriptorsResponse>;
  listPodSandboxMetrics(
    request: ListPodSandboxMetricsRequestInit,
    options?: CallOptions,
  ): Promise<ListPodSandboxMetricsResponse>;
  runtimeConfig(
    request: RuntimeConfigRequestInit,
    options?: CallOptions,
  ): Promise<RuntimeConfigResponse>;
  updatePodSandboxResources(
    request: UpdatePodSandboxResourcesRequestInit,
    options?: CallOptions,
  ): Promise<UpdatePodSandboxResourcesResponse>;
}

/** CRI `runtime.v1.ImageService`, one method per RPC. */
export interface ImageService {
  listImages(
    request: ListImagesRequestInit,
    options?: CallOptions,
  ): Promise<ListImagesResponse>;
  imageStatus(
    request: ImageStatusRequestInit,
    options?: CallOptions,
  ): Promise<ImageStatusResponse>;
  pullImage(
    request: PullImageRequestInit,
    options?: CallOptions,
  ): Promise<PullImageResponse>;
  removeImage(
    request: RemoveImageRequestInit,
    options?: CallOptions,
  ): Promise<RemoveImageResponse>;
  imageFsInfo(
    request: ImageFsInfoRequestInit,
    options?: CallOptions,
  ): Promise<ImageFsInfoResponse>;
}

/** Both CRI services plus resource cleanup, as returned by `createCriRuntime`. */
export interface CriRuntime
  extends RuntimeService, ImageService, AsyncDisposable {
  /** Closes the HTTP/2 connection(s); pending calls reject with `CanceledError`. */
  close(): Promise<void>;
}
