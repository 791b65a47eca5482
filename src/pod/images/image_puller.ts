/**
 * Makes sure a container's image is present before the container is created (kubelet's
 * `EnsureImageExists`): pull policy (explicit or defaulted), per-image pull back-off, and
 * serialized or bounded-parallel pulls.
 *
 * Failures are values with the upstream reasons: `ErrImagePull`, `ImagePullBackOff`,
 * `ErrImageNeverPull`, `InvalidImageName`.
 *
 * @module
 */

import type { EventType } from "../../api/mod.ts";
import { formatGoDuration } from "../../util/go_duration.ts";
import {
  containerReference,
  noPodEvents,
  type PodEventRecorder,
} from "../pod_events.ts";
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { ImageService, PullImageRequestInit } from "../../runtime/mod.ts";
import {
  type Backoff,
  createImageBackoff,
  imageBackoffKey,
} from "../containers/backoff.ts";
import type { Container, Pod, PullPolicy } from "../types.ts";
import { runtimeErrorText } from "../containers/runtime_messages.ts";
import type { Secret } from "../../api/mod.ts";
import {
  type Keyring,
  lookupCredentials,
  makeKeyring,
  type RegistryCredential,
} from "./pull_credentials.ts";
import { imageRepository } from "../../util/image_reference.ts";

/**
 * The node's registry logins for a normalized repository (docker config files on the node,
 * credential plugins), as keyrings in the order they are tried.
 */
export type NodeLoginSource = (repository: string) => Promise<Keyring[]>;

/** Reads a pod's `imagePullSecrets` (see `pullSecretsFor`). */
export type PullSecretSource = (
  pod: Pod,
  signal?: AbortSignal,
) => Promise<Secret[]>;

/** Outcome of {@linkcode ImagePuller.ensureImage}. */
export type EnsureImageResult =
  | { ok: true; imageRef: string }
  | { ok: false; reason: string; message: string; retryAt?: number };

/** Pulls images on behalf of the syncer. */
export interface ImagePuller {
  /** Resolves the image reference to run for `container`, pulling it if the policy says so. */
  ensureImage(
    pod: Pod,
    container: Container,
    options: {
      sandboxConfig?: PullImageRequestInit["sandboxConfig"];
      signal?: AbortSignal;
    },
  ): Promise<EnsureImageResult>;
}

/** Options of {@linkcode createImagePuller}. */
export interface ImagePullerOptions {
  /** Pull one image at a time (kubelet default `true`). */
  serializeImagePulls: boolean;
  /** Cap on parallel pulls when not serialized (0 or unset = unlimited). */
  maxParallelImagePulls?: number;
}

const IMAGE_REFERENCE_REGEXP = /^[a-z0-9]+(?:[._\-\/:@][A-Za-z0-9_.\-]+)*$/;

/** Kubernetes API default pull policy: Always for `:latest` or untagged images. */
export function defaultPullPolicy(image: string): PullPolicy {
  if (image.includes("@")) return "IfNotPresent";
  const lastSegment = image.slice(image.lastIndexOf("/") + 1);
  const colon = lastSegment.lastIndexOf(":");
  if (colon === -1) return "Always";
  return lastSegment.slice(colon + 1) === "latest" ? "Always" : "IfNotPresent";
}

/** A counting semaphore whose waiters give up when their signal aborts. */
class Semaphore {
  #free: number;
  #waiters: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#free > 0) {
      this.#free--;
    } else {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          this.#waiters = this.#waiters.filter((w) => w !== wake);
          reject(signal!.reason);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        this.#waiters.push(wake);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

class RuntimeImagePuller implements ImagePuller {
  #images: ImageService;
  #clock: Clock;
  #logger: Logger;
  #backoff: Backoff;
  #limit: Semaphore | undefined;
  #pullSecrets: PullSecretSource | undefined;
  #nodeLogins: NodeLoginSource | undefined;
  #events: PodEventRecorder;

  constructor(
    deps: {
      images: ImageService;
      clock: Clock;
      logger: Logger;
      backoff?: Backoff;
      pullSecrets?: PullSecretSource;
      nodeLogins?: NodeLoginSource;
      events?: PodEventRecorder;
    },
    options: ImagePullerOptions,
  ) {
    this.#events = deps.events ?? noPodEvents;
    this.#images = deps.images;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
    this.#backoff = deps.backoff ?? createImageBackoff({ clock: deps.clock });
    this.#pullSecrets = deps.pullSecrets;
    this.#nodeLogins = deps.nodeLogins;
    const max = options.serializeImagePulls
      ? 1
      : options.maxParallelImagePulls ?? 0;
    this.#limit = max > 0 ? new Semaphore(max) : undefined;
  }

  async #imageRef(image: string, signal?: AbortSignal): Promise<string> {
    return (await this.#imageInfo(image, signal)).id;
  }

  async #imageInfo(
    image: string,
    signal?: AbortSignal,
  ): Promise<{ id: string; size: bigint }> {
    const res = await this.#images.imageStatus(
      { image: { image } },
      signal ? { signal } : {},
    );
    return { id: res.image?.id ?? "", size: res.image?.size ?? 0n };
  }

  /**
   * Pulls anonymously without credentials, else with each credential in turn until one works
   * (upstream `PullImage`); rejects with every attempt's error, as upstream's aggregate.
   */
  async #pullWith(
    image: string,
    sandboxConfig: PullImageRequestInit["sandboxConfig"],
    credentials: RegistryCredential[],
    signal?: AbortSignal,
  ): Promise<string> {
    const call = signal ? { signal } : {};
    const request = (auth?: RegistryCredential): PullImageRequestInit => ({
      image: { image },
      ...(sandboxConfig ? { sandboxConfig } : {}),
      ...(auth ? { auth } : {}),
    });
    if (credentials.length === 0) {
      return (await this.#images.pullImage(request(), call)).imageRef;
    }
    const errors: string[] = [];
    for (const auth of credentials) {
      try {
        return (await this.#images.pullImage(request(auth), call)).imageRef;
      } catch (error) {
        signal?.throwIfAborted();
        errors.push(runtimeErrorText(error));
      }
    }
    const unique = [...new Set(errors)];
    throw new Error(
      unique.length === 1 ? unique[0] : `[${unique.join(", ")}]`,
    );
  }

  async ensureImage(
    pod: Pod,
    container: Container,
    options: {
      sandboxConfig?: PullImageRequestInit["sandboxConfig"];
      signal?: AbortSignal;
    },
  ): Promise<EnsureImageResult> {
    const image = container.image ?? "";
    const record = (type: EventType, reason: string, message: string) =>
      this.#events.event(
        containerReference(pod, container.name),
        type,
        reason,
        message,
      );
    if (!IMAGE_REFERENCE_REGEXP.test(image)) {
      record(
        "Warning",
        "InspectFailed",
        `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`,
      );
      return {
        ok: false,
        reason: "InvalidImageName",
        message:
          `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`,
      };
    }
    const policy = container.imagePullPolicy ?? defaultPullPolicy(image);
    const signal = options.signal;
    const present = policy === "Always"
      ? ""
      : await this.#imageRef(image, signal);
    if (policy !== "Always" && present) {
      this.#logger.v(4).info("Container image already present on machine", {
        image,
      });
      record(
        "Normal",
        "Pulled",
        `Container image "${image}" already present on machine`,
      );
      return { ok: true, imageRef: present };
    }
    if (policy === "Never") {
      record(
        "Warning",
        "ErrImageNeverPull",
        `Container image "${image}" is not present with pull policy of Never`,
      );
      return {
        ok: false,
        reason: "ErrImageNeverPull",
        message:
          `Container image "${image}" is not present with pull policy of Never`,
      };
    }
    const key = imageBackoffKey(pod, image);
    const now = this.#clock.now();
    if (this.#backoff.isInBackoffSinceUpdate(key, now)) {
      record("Normal", "BackOff", `Back-off pulling image "${image}"`);
      return {
        ok: false,
        reason: "ImagePullBackOff",
        message: `Back-off pulling image "${image}"`,
        retryAt: this.#backoff.expiresAtSinceUpdate(key)!,
      };
    }
    const release = this.#limit ? await this.#limit.acquire(signal) : undefined;
    const pullStart = this.#clock.now();
    try {
      this.#logger.info("Pulling image", { image, pod: pod.metadata.name });
      record("Normal", "Pulling", `Pulling image "${image}"`);
      // the pod's pull secrets first, then the node's logins (upstream `MakeDockerKeyring`
      // over the node keyring and the credential plugins)
      const keyrings = [
        makeKeyring(await this.#pullSecrets?.(pod, signal) ?? []),
        ...(await this.#nodeLogins?.(imageRepository(image)) ?? []),
      ];
      const credentials = keyrings.flatMap((k) => lookupCredentials(k, image));
      const pulled = await this.#pullWith(
        image,
        options.sandboxConfig,
        credentials,
        signal,
      );
      const info = await this.#imageInfo(pulled || image, signal);
      const imageRef = pulled || info.id || image;
      this.#logger.info("Successfully pulled image", { image, imageRef });
      const done = this.#clock.now();
      record(
        "Normal",
        "Pulled",
        `Successfully pulled image "${image}" in ${
          formatGoDuration(done - pullStart)
        } (${
          formatGoDuration(done - now)
        } including waiting). Image size: ${info.size} bytes.`,
      );
      return { ok: true, imageRef };
    } catch (error) {
      signal?.throwIfAborted();
      this.#backoff.next(key, this.#clock.now());
      // upstream prints the CRI error itself (grpc-go's `rpc error: …` text)
      const detail = runtimeErrorText(error);
      this.#logger.warn("Failed to pull image", { image, err: detail });
      record("Warning", "Failed", `Failed to pull image "${image}": ${detail}`);
      return {
        ok: false,
        reason: "ErrImagePull",
        message: `Failed to pull image "${image}": ${detail}`,
        retryAt: this.#backoff.expiresAtSinceUpdate(key)!,
      };
    } finally {
      release?.();
    }
  }
}

/** Creates an image puller over the CRI image service. */
export function createImagePuller(
  deps: {
    images: ImageService;
    clock: Clock;
    logger: Logger;
    backoff?: Backoff;
    /** The pod's pull secrets; absent: every pull is anonymous. */
    pullSecrets?: PullSecretSource;
    /** The node's own registry logins, tried after the pod's; absent: none. */
    nodeLogins?: NodeLoginSource;
    /** Pulling, Pulled, Failed, BackOff events; omitted → none. */
    events?: PodEventRecorder;
  },
  options: ImagePullerOptions,
): ImagePuller {
  return new RuntimeImagePuller(deps, options);
}
