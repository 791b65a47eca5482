/**
 * The ImageService RPCs of the simulated runtime over its image store
 * (`_images.ts`): list, status, pull (slow, failing or needing auth as the
 * scenario says), remove and image filesystem usage.
 */

import { create } from "@bufbuild/protobuf";
import { RuntimeError } from "../errors.ts";
import {
  type ImageFsInfoResponse,
  ImageFsInfoResponseSchema,
  type ImageStatusResponse,
  ImageStatusResponseSchema,
  type ListImagesResponse,
  ListImagesResponseSchema,
  type PullImageResponse,
  PullImageResponseSchema,
  type RemoveImageResponse,
  RemoveImageResponseSchema,
} from "../gen/api_pb.ts";
import type { CallOptions, CriRequest } from "../types.ts";
import { toImage } from "./_convert.ts";
import type { SimDeps, SimHandlers } from "./_deps.ts";
import { callWait } from "./_wait.ts";

const UNKNOWN = 2;

/** The image RPCs; see the module comment. */
export class SimImageService implements Partial<SimHandlers> {
  readonly #deps: SimDeps;

  constructor(deps: SimDeps) {
    this.#deps = deps;
  }

  listImages(): ListImagesResponse {
    // containerd 1.6 ignores ListImagesRequest.filter and lists every image.
    const selected = this.#deps.images.list();
    return create(ListImagesResponseSchema, { images: selected.map(toImage) });
  }

  imageStatus(
    request: CriRequest<"imageStatus">,
  ): ImageStatusResponse {
    const image = this.#deps.images.resolve(request.image?.image);
    return create(
      ImageStatusResponseSchema,
      image ? { image: toImage(image) } : {},
    );
  }

  async pullImage(
    request: CriRequest<"pullImage">,
    options?: CallOptions,
  ): Promise<PullImageResponse> {
    const ref = request.image?.image ?? "";
    if (!ref) {
      throw new RuntimeError(UNKNOWN, "image reference must not be empty");
    }
    const images = this.#deps.images;
    await callWait(
      this.#deps.clock,
      images.behavior(ref).pullDelayMs ?? 0,
      options,
    );
    images.checkPull(ref, request.auth);
    const image = images.add(ref);
    return create(PullImageResponseSchema, { imageRef: image.id });
  }

  removeImage(
    request: CriRequest<"removeImage">,
  ): RemoveImageResponse {
    this.#deps.images.remove(request.image?.image);
    return create(RemoveImageResponseSchema);
  }

  imageFsInfo(): ImageFsInfoResponse {
    const images = this.#deps.images;
    return create(ImageFsInfoResponseSchema, {
      imageFilesystems: [{
        timestamp: BigInt(this.#deps.clock.now()) * 1_000_000n,
        fsId: {
          mountpoint:
            "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs",
        },
        usedBytes: { value: BigInt(images.usedBytes()) },
        inodesUsed: { value: BigInt(images.list().length * 64) },
      }],
    });
  }
}
