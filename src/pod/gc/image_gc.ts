/**
 * Image garbage collection (upstream `realImageGCManager`, run every 5 minutes by kubelet's
 * `StartGarbageCollection`): images no container uses are removed when they have been unused
 * longer than the maximum age, or, least recently used first, while the image filesystem is
 * over the high threshold, until it is down to the low one. The decisions are the pure
 * functions of `image_gc_plan.ts`; {@linkcode createImageGc} only lists, removes and reports.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { ImageService, RuntimeService } from "../../runtime/mod.ts";
import { errorMessage } from "../../util/error_message.ts";
import {
  freeDiskSpaceFailedMessage,
  IMAGE_GC_PERIOD_MS,
  type ImageFsStats,
  type ImageGcPolicy,
  type ImageRecord,
  imagesInEvictionOrder,
  imagesInUse,
  planFreeSpace,
  planOldImages,
  updateImageRecords,
} from "./image_gc_plan.ts";

/** Records a Warning event on the Node (upstream's `nodeRef` events). */
export type NodeWarning = (reason: string, message: string) => void;

/** Dependencies of {@linkcode createImageGc}. */
export interface ImageGcDeps {
  runtime:
    & Pick<RuntimeService, "listContainers">
    & Pick<ImageService, "listImages" | "removeImage">;
  /** Capacity and available bytes of the image filesystem (upstream `ImageFsStats`). */
  imageFsStats: () => Promise<ImageFsStats>;
  clock: Clock;
  logger: Logger;
  /** `FreeDiskSpaceFailed`, `InvalidDiskCapacity` and `ImageGCFailed`; omitted → none. */
  warn?: NodeWarning;
}

/** Options of {@linkcode createImageGc}. */
export interface ImageGcOptions {
  policy: ImageGcPolicy;
  /** `--pod-infra-container-image`: never removed (see `updateImageRecords`). */
  sandboxImage?: string;
}

/** Image GC bound to a runtime; keeps the image records between passes. */
export interface ImageGc {
  /**
   * One pass (upstream `GarbageCollect`); `beganGc` is when GC started (the maximum age
   * applies only once the kubelet has run longer than it). Rejects when the pass could not
   * free what it had to; removals already done stay done.
   */
  collect(beganGc: number, options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Upstream `DeleteUnusedImages` (node-pressure reclaim): every unused, unpinned image past
   * the minimum age and not used at this instant goes, whatever the thresholds. Rejects
   * listing the failed removals.
   */
  deleteUnusedImages(options?: { signal?: AbortSignal }): Promise<void>;
  /** The records as of the last pass, by image id. */
  records(): ReadonlyMap<string, ImageRecord>;
}

class CriImageGc implements ImageGc {
  #deps: ImageGcDeps;
  #options: ImageGcOptions;
  #records = new Map<string, ImageRecord>();

  constructor(deps: ImageGcDeps, options: ImageGcOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  records(): ReadonlyMap<string, ImageRecord> {
    return this.#records;
  }

  /** Upstream `detectImages`: refreshes the records; returns the ids in use. */
  async #detect(now: number, call: CallSignal): Promise<Set<string>> {
    const { runtime } = this.#deps;
    const [{ images }, { containers }] = await Promise.all([
      runtime.listImages({}, call),
      runtime.listContainers({}, call),
    ]);
    const inUse = imagesInUse(containers);
    this.#records = updateImageRecords(this.#records, {
      images: images.map((i) => ({
        id: i.id,
        sizeBytes: Number(i.size),
        pinned: i.pinned,
        names: [...i.repoTags, ...i.repoDigests],
      })),
      inUse,
    }, {
      detectTime: now,
      now,
      ...(this.#options.sandboxImage
        ? { sandboxImage: this.#options.sandboxImage }
        : {}),
    });
    return inUse;
  }

  /** Upstream `freeImage`; failures are collected, the record goes only on success. */
  async #remove(
    image: ImageRecord,
    reason: string,
    ctx: { call: CallSignal; errors: string[] },
  ): Promise<boolean> {
    this.#deps.logger.info("Removing image to free bytes", {
      imageID: image.id,
      size: image.sizeBytes,
      reason,
    });
    try {
      await this.#deps.runtime.removeImage(
        { image: { image: image.id } },
        ctx.call,
      );
    } catch (error) {
      ctx.call.signal?.throwIfAborted();
      ctx.errors.push(`remove image "${image.id}": ${errorMessage(error)}`);
      return false;
    }
    this.#records.delete(image.id);
    return true;
  }

  async deleteUnusedImages(
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    const call: CallSignal = options.signal ? { signal: options.signal } : {};
    const now = this.#deps.clock.now();
    const inUse = await this.#detect(now, call);
    const candidates = imagesInEvictionOrder(this.#records, inUse).filter((r) =>
      r.lastUsed < now && now - r.firstDetected >= this.#options.policy.minAgeMs
    );
    const errors: string[] = [];
    for (const image of candidates) {
      await this.#remove(image, "reclaim", { call, errors });
    }
    if (errors.length) {
      throw new Error(`Cannot delete unused images: ${errors.join("; ")}`);
    }
  }

  async collect(
    beganGc: number,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    const call: CallSignal = options.signal ? { signal: options.signal } : {};
    const { policy } = this.#options;
    const now = this.#deps.clock.now();
    const inUse = await this.#detect(now, call);
    const candidates = imagesInEvictionOrder(this.#records, inUse);
    const old = planOldImages(candidates, { policy, now, beganGc });
    const ageErrors: string[] = [];
    for (const image of old.remove) {
      await this.#remove(image, "age", { call, errors: ageErrors });
    }
    if (ageErrors.length) {
      throw new Error(
        `Cannot free images unused for longer than ${policy.maxAgeMs} ms: ${
          ageErrors.join("; ")
        }`,
      );
    }
    const plan = planFreeSpace(old.left, {
      fs: await this.#deps.imageFsStats(),
      policy,
      now,
    });
    if (plan.kind === "invalid-capacity") {
      this.#deps.warn?.("InvalidDiskCapacity", plan.message);
      throw new Error(plan.message);
    }
    if (plan.kind === "below-threshold") return;
    this.#deps.logger.info(
      "Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold",
      {
        usage: plan.usagePercent,
        highThreshold: policy.highThresholdPercent,
        amountToFree: plan.amountToFree,
        lowThreshold: policy.lowThresholdPercent,
      },
    );
    const errors: string[] = [];
    let freed = 0;
    for (const image of plan.remove) {
      if (await this.#remove(image, "space", { call, errors })) {
        freed += image.sizeBytes;
      }
    }
    if (errors.length) {
      throw new Error(
        `Cannot free ${plan.amountToFree} bytes, freed ${freed} bytes: ${
          errors.join("; ")
        }`,
      );
    }
    if (freed < plan.amountToFree) {
      const message = freeDiskSpaceFailedMessage(plan.amountToFree, freed);
      this.#deps.warn?.("FreeDiskSpaceFailed", message);
      throw new Error(message);
    }
  }
}

type CallSignal = { signal?: AbortSignal };

/** Creates the CRI-backed {@linkcode ImageGc}. */
export function createImageGc(
  deps: ImageGcDeps,
  options: ImageGcOptions,
): ImageGc {
  return new CriImageGc(deps, options);
}

/**
 * Whether image GC runs at all: upstream skips it when the high threshold is 100 and there is
 * no maximum age.
 */
export function imageGcEnabled(policy: ImageGcPolicy): boolean {
  return policy.highThresholdPercent !== 100 || policy.maxAgeMs !== 0;
}

/**
 * Upstream `StartImageGC`: a pass now and then every period until `signal` aborts. A failure
 * is logged; a second one in a row also records `ImageGCFailed` on the Node.
 */
export async function runImageGc(
  gc: ImageGc,
  deps: { clock: Clock; logger: Logger; warn?: NodeWarning },
  options: { periodMs?: number; signal: AbortSignal },
): Promise<void> {
  const { signal } = options;
  const beganGc = deps.clock.now();
  let failedBefore = false;
  while (!signal.aborted) {
    try {
      await gc.collect(beganGc, { signal });
      deps.logger.v(failedBefore ? 1 : 4).info(
        "Image garbage collection succeeded",
      );
      failedBefore = false;
    } catch (cause) {
      if (signal.aborted) break;
      const err = errorMessage(cause);
      if (failedBefore) {
        deps.logger.error(
          "Image garbage collection failed multiple times in a row",
          { err },
        );
        deps.warn?.("ImageGCFailed", err);
      } else {
        deps.logger.error(
          "Image garbage collection failed once. Stats initialization may not have completed yet",
          { err },
        );
      }
      failedBefore = true;
    }
    await deps.clock.sleep(options.periodMs ?? IMAGE_GC_PERIOD_MS, signal)
      .catch(() => {});
  }
}
