/**
 * Image GC decisions (upstream `image_gc_manager.go`), pure: the image records kept between
 * passes (`detectImages`), which images are candidates and in what order
 * (`imagesInEvictionOrder`), which go for age (`freeOldImages`) and which go to bring the image
 * filesystem down to the low threshold (`GarbageCollect` + `freeSpace`).
 * {@linkcode createImageGc} in `image_gc.ts` executes them.
 *
 * @module
 */

/** Upstream `ImageGCPeriod`. */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;

/**
 * Upstream `ImageGCPolicy`, from `imageGCHighThresholdPercent`, `imageGCLowThresholdPercent`,
 * `imageMinimumGCAge` and `imageMaximumGCAge`.
 */
export interface ImageGcPolicy {
  /** Usage (percent) at or above which space is freed. */
  highThresholdPercent: number;
  /** Usage (percent) that freeing aims to get down to. */
  lowThresholdPercent: number;
  /** Images detected more recently than this are kept. */
  minAgeMs: number;
  /** Unused for longer than this: removed whatever the usage; 0 turns it off. */
  maxAgeMs: number;
}

/** An image as the runtime lists it (CRI `Image`). */
export interface ObservedImage {
  id: string;
  sizeBytes: number;
  /** CRI `Image.pinned`: the runtime asks that it never be removed (the sandbox image). */
  pinned: boolean;
  /** CRI `Image.repo_tags` and `repo_digests`: the names it is known by. */
  names: readonly string[];
}

/** What the kubelet remembers of an image between passes (upstream `imageRecord`). */
export interface ImageRecord {
  id: string;
  /** When a pass first saw it (ms since the epoch). */
  firstDetected: number;
  /** When a pass last saw a container of it; 0: never. */
  lastUsed: number;
  sizeBytes: number;
  pinned: boolean;
}

/**
 * The images in use (upstream `detectImages`, from `GetPods(all=true)`): those of every
 * container the runtime lists, exited ones too, by the image id the runtime resolved
 * (`imageRef` when it gave no id).
 */
export function imagesInUse(
  containers: readonly { imageId?: string; imageRef?: string }[],
): Set<string> {
  const inUse = new Set<string>();
  for (const c of containers) {
    const id = c.imageId || c.imageRef;
    if (id) inUse.add(id);
  }
  return inUse;
}

/**
 * Upstream `detectImages`: records of the images listed now. A new image is detected at
 * `detectTime`; one that any container (running or not) refers to was used at `now`; records
 * of images gone from the runtime are dropped. The sandbox image (`--pod-infra-container-image`,
 * by id or name) counts as pinned: runtimes before containerd 1.7 do not pin it.
 */
export function updateImageRecords(
  previous: ReadonlyMap<string, ImageRecord>,
  observed: { images: readonly ObservedImage[]; inUse: ReadonlySet<string> },
  times: { detectTime: number; now: number; sandboxImage?: string },
): Map<string, ImageRecord> {
  const sandbox = times.sandboxImage;
  const next = new Map<string, ImageRecord>();
  for (const image of observed.images) {
    const before = previous.get(image.id);
    next.set(image.id, {
      id: image.id,
      firstDetected: before?.firstDetected ?? times.detectTime,
      lastUsed: observed.inUse.has(image.id)
        ? times.now
        : before?.lastUsed ?? 0,
      sizeBytes: image.sizeBytes,
      pinned: image.pinned ||
        (sandbox !== undefined && sandbox !== "" &&
          (image.id === sandbox || image.names.includes(sandbox))),
    });
  }
  return next;
}

/**
 * Upstream `imagesInEvictionOrder`: images no container uses and the runtime did not pin,
 * least recently used first, ties broken by the earlier detection.
 */
export function imagesInEvictionOrder(
  records: ReadonlyMap<string, ImageRecord>,
  inUse: ReadonlySet<string>,
): ImageRecord[] {
  return [...records.values()]
    .filter((r) => !inUse.has(r.id) && !r.pinned)
    .sort((a, b) =>
      a.lastUsed === b.lastUsed
        ? a.firstDetected - b.firstDetected
        : a.lastUsed - b.lastUsed
    );
}

/**
 * Upstream `freeOldImages`: with a maximum age, once the kubelet has run longer than it, the
 * candidates unused for longer than it. Returns those to remove and those left.
 */
export function planOldImages(
  candidates: readonly ImageRecord[],
  options: { policy: ImageGcPolicy; now: number; beganGc: number },
): { remove: ImageRecord[]; left: ImageRecord[] } {
  const { maxAgeMs } = options.policy;
  if (maxAgeMs === 0 || options.now - options.beganGc <= maxAgeMs) {
    return { remove: [], left: [...candidates] };
  }
  const remove: ImageRecord[] = [];
  const left: ImageRecord[] = [];
  for (const r of candidates) {
    (options.now - r.lastUsed > maxAgeMs ? remove : left).push(r);
  }
  return { remove, left };
}

/** Image filesystem figures (CRI `ImageFsInfo` mount point, `statfs`). */
export interface ImageFsStats {
  capacityBytes: number;
  availableBytes: number;
}

/** The outcome of {@linkcode planFreeSpace}. */
export type FreeSpacePlan =
  | { kind: "invalid-capacity"; message: string }
  | { kind: "below-threshold"; usagePercent: number }
  | {
    kind: "free";
    usagePercent: number;
    amountToFree: number;
    /** In order; their sizes add up to `amountToFree` or as close as the candidates allow. */
    remove: ImageRecord[];
    /** Sum of the sizes in `remove`. */
    plannedBytes: number;
  };

/**
 * Upstream `GarbageCollect` + `freeSpace`: when usage is at or above the high threshold, the
 * candidates (in eviction order) to remove until the bytes freed bring usage down to the low
 * threshold. A candidate used at `now` or later, or detected less than the minimum age ago,
 * is skipped.
 */
export function planFreeSpace(
  candidates: readonly ImageRecord[],
  options: { fs: ImageFsStats; policy: ImageGcPolicy; now: number },
): FreeSpacePlan {
  const { policy, now } = options;
  const capacity = options.fs.capacityBytes;
  const available = Math.min(options.fs.availableBytes, capacity);
  if (capacity <= 0) {
    return {
      kind: "invalid-capacity",
      message: "invalid capacity 0 on image filesystem",
    };
  }
  const usagePercent = 100 - Math.trunc(available * 100 / capacity);
  if (usagePercent < policy.highThresholdPercent) {
    return { kind: "below-threshold", usagePercent };
  }
  const amountToFree =
    Math.trunc(capacity * (100 - policy.lowThresholdPercent) / 100) -
    available;
  const remove: ImageRecord[] = [];
  let plannedBytes = 0;
  for (const r of candidates) {
    if (r.lastUsed >= now) continue;
    if (now - r.firstDetected < policy.minAgeMs) continue;
    remove.push(r);
    plannedBytes += r.sizeBytes;
    // checked after a removal, as upstream: at the threshold one image still goes
    if (plannedBytes >= amountToFree) break;
  }
  return { kind: "free", usagePercent, amountToFree, remove, plannedBytes };
}

/** Upstream's `FreeDiskSpaceFailed` message when the candidates cannot free enough. */
export function freeDiskSpaceFailedMessage(
  amountToFree: number,
  freed: number,
): string {
  return `Failed to garbage collect required amount of images. Attempted to free ${amountToFree} bytes, but only found ${freed} bytes eligible to free.`;
}
