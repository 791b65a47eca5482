/**
 * Image store of the simulated runtime: references normalized the way
 * containerd does (`busybox` → `docker.io/library/busybox:latest`), ids and
 * digests derived from the name, pulls that can be slow, fail or need auth.
 */

import { createHash } from "node:crypto";
import { NotFoundError, RuntimeError } from "../errors.ts";
import type { SimImageBehavior, SimScenario } from "./scenario.ts";
import {
  imageRepository,
  normalizeImageRef,
} from "../../util/image_reference.ts";

export { normalizeImageRef };

/** The pause image a fresh simulated runtime already has. */
export const SIM_PAUSE_IMAGE = "registry.k8s.io/pause:3.10";

const DEFAULT_IMAGE_SIZE = 5 * 1024 * 1024;
const DIGEST_REGEXP = /^sha256:[0-9a-f]{64}$/;

/** One locally present image. */
export interface SimImage {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
}

/** Credentials as CRI's `AuthConfig` carries them. */
export interface SimAuth {
  username?: string;
  password?: string;
  auth?: string;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

const repoOf = imageRepository;

function hostOf(normalized: string): string {
  return normalized.slice(0, normalized.indexOf("/"));
}

/** In-memory image store; see the module comment. */
export class SimImageStore {
  #images = new Map<string, SimImage>();
  #byRef = new Map<string, string>();
  #pullCounts = new Map<string, number>();
  #scenario: SimScenario;
  #registry: Set<string> | undefined;

  constructor(scenario: SimScenario, preloaded: string[]) {
    this.#scenario = scenario;
    this.#registry = scenario.registryImages
      ? new Set(scenario.registryImages.map(normalizeImageRef))
      : undefined;
    for (const ref of preloaded) this.add(ref);
  }

  /** The behaviour entry for `ref` (as written or normalized). */
  behavior(ref: string): SimImageBehavior {
    const images = this.#scenario.images ?? {};
    return images[ref] ?? images[normalizeImageRef(ref)] ?? {};
  }

  /** Finds a present image by tag, digest reference or id. */
  resolve(ref: string | undefined): SimImage | undefined {
    if (!ref) return undefined;
    if (DIGEST_REGEXP.test(ref)) return this.#images.get(ref);
    const id = this.#byRef.get(normalizeImageRef(ref));
    return id === undefined ? undefined : this.#images.get(id);
  }

  /** Makes `ref` present (as a pull would) and returns the image. */
  add(ref: string): SimImage {
    const normalized = normalizeImageRef(ref);
    const existing = this.resolve(normalized);
    if (existing) return existing;
    const repo = repoOf(normalized);
    const id = `sha256:${sha256Hex(`image:${repo}`)}`;
    const digest = `${repo}@sha256:${sha256Hex(`manifest:${repo}`)}`;
    const image = this.#images.get(id) ??
      {
        id,
        repoTags: [],
        repoDigests: [digest],
        size: this.behavior(ref).sizeBytes ?? DEFAULT_IMAGE_SIZE,
      };
    if (!normalized.includes("@")) image.repoTags.push(normalized);
    this.#images.set(id, image);
    this.#byRef.set(normalized, id);
    this.#byRef.set(digest, id);
    return image;
  }

  /**
   * Checks that a pull of `ref` may succeed now (registry has it, auth fits,
   * no scripted failure left) and counts the attempt.
   * @throws RuntimeError shaped like containerd 1.6's pull errors
   */
  checkPull(ref: string, auth: SimAuth | undefined): void {
    const normalized = normalizeImageRef(ref);
    const prefix = `failed to pull and unpack image "${normalized}"`;
    const attempt = (this.#pullCounts.get(normalized) ?? 0) + 1;
    this.#pullCounts.set(normalized, attempt);
    const failures = this.behavior(ref).pullFailures ?? 0;
    if (failures === -1 || attempt <= failures) {
      const why = this.behavior(ref).pullError ??
        `simulated pull failure ${attempt}`;
      throw new RuntimeError(2, `${prefix}: ${why}`);
    }
    const needed = this.#scenario.registryAuth?.[hostOf(normalized)];
    if (needed && !authMatches(auth, needed)) {
      throw new RuntimeError(
        2,
        `${prefix}: failed to resolve reference "${normalized}": pulling from host ${
          hostOf(normalized)
        } failed with status code [manifests ${
          normalized.slice(normalized.lastIndexOf(":") + 1)
        }]: 401 Unauthorized`,
      );
    }
    if (this.#registry && !this.#registry.has(normalized)) {
      throw new NotFoundError(
        `${prefix}: failed to resolve reference "${normalized}": ${normalized}: not found`,
      );
    }
  }

  /** Removes every reference of the image `ref` points at; unknown refs are a no-op. */
  remove(ref: string | undefined): void {
    const image = this.resolve(ref);
    if (!image) return;
    this.#images.delete(image.id);
    for (const [key, id] of this.#byRef) {
      if (id === image.id) this.#byRef.delete(key);
    }
  }

  /** Every present image. */
  list(): SimImage[] {
    return [...this.#images.values()];
  }

  /** Bytes used by all present images. */
  usedBytes(): number {
    let total = 0;
    for (const image of this.#images.values()) total += image.size;
    return total;
  }
}

function authMatches(
  auth: SimAuth | undefined,
  needed: { username: string; password: string },
): boolean {
  if (!auth) return false;
  if (auth.auth) {
    try {
      return atob(auth.auth) === `${needed.username}:${needed.password}`;
    } catch {
      return false;
    }
  }
  return auth.username === needed.username &&
    auth.password === needed.password;
}
