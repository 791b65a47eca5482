/**
 * Keeps the API server's mirror pods in line with the static pods ({@linkcode planMirrorPods}
 * decides): one pass takes the node's mirror pods (as the API pod source last reported them
 * through `observeMirrorPods`, else from a LIST of the pods bound to the node), deletes the
 * outdated and orphaned mirrors (grace 0, UID precondition; NotFound and Conflict mean someone
 * was faster) and creates the missing ones; a full name whose static pod is still being
 * killed is left as it is until the kill finished. Passes run every `periodMs`, when `trigger()` is
 * called (static pods changed) or mirror pods changed, and not before the Node's UID is known.
 * `mirrorPodOf` tells the status manager where a static pod's status goes.
 * @module
 */
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { ApiCallOptions } from "../../api/mod.ts";
import { ApiAlreadyExistsError, ApiStatusError } from "../../api/mod.ts";
import {
  isMirrorPod,
  isStaticPod,
  type MirrorPlan,
  planMirrorPods,
} from "./mirror_pods.ts";
import {
  CONFIG_HASH_ANNOTATION,
  CONFIG_MIRROR_ANNOTATION,
} from "./static_pod.ts";
import type { Pod } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** The pod calls mirror pods need (the API client implements them). */
export interface MirrorPodApi {
  listPods(
    query: { fieldSelector: string },
    options?: ApiCallOptions,
  ): Promise<{ items: Pod[] }>;
  /** Rejects with `ApiAlreadyExistsError` when the name is taken. */
  createPod(pod: Pod, options?: ApiCallOptions): Promise<Pod>;
  deletePod(
    namespace: string,
    name: string,
    del: { gracePeriodSeconds: number; uid: string },
    options?: ApiCallOptions,
  ): Promise<void>;
}

/** Dependencies of {@linkcode MirrorPodManager}. */
export interface MirrorPodDeps {
  api: MirrorPodApi;
  clock: Clock;
  logger: Logger;
  /** The pods of every source now; the static ones get mirrors. */
  pods(): readonly Pod[];
  /** The Node's UID once registered (the owner reference needs it). */
  nodeUid(): string | undefined;
  /**
   * True once every pod source has reported (upstream deletes orphaned mirrors only then);
   * omitted → always. No pass acts before.
   */
  sourcesReady?(): boolean;
  /**
   * True while a static pod with this full name (`namespace/name`) is stopping its
   * containers; its mirror pod is then kept until the kill finished. Omitted → never.
   */
  isTerminatingByFullName?(fullName: string): boolean;
}

/** Options of {@linkcode MirrorPodManager}. */
export interface MirrorPodOptions {
  nodeName: string;
  /**
   * Time between passes (default 1 s). A pass with nothing to do makes no API call while a
   * watch reports the mirror pods; without one, mirror pods are listed every 10 s.
   */
  periodMs?: number;
}

/** How often mirror pods are listed when no watch reports them. */
const LIST_PERIOD_MS = 10_000;

function fullName(pod: Pod): string {
  return `${pod.metadata.namespace ?? "default"}/${pod.metadata.name ?? ""}`;
}

function errText(e: unknown): string {
  return errorMessage(e);
}

/** The mirror pod loop. */
export class MirrorPodManager {
  #deps: MirrorPodDeps;
  #options: MirrorPodOptions;
  #wake: (() => void) | undefined;
  #pending = false;
  /** The node's mirror pods as last reported, listed or written, by namespace/name. */
  #mirrors = new Map<string, Pod>();
  /** When the view was last refreshed by a report or a LIST. */
  #freshAt = -Infinity;
  /** Whether the API pod source reports mirror pods (then no LIST is needed). */
  #observing = false;

  constructor(deps: MirrorPodDeps, options: MirrorPodOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  /** Asks for a pass now. */
  trigger(): void {
    this.#pending = true;
    this.#wake?.();
  }

  /** The node's mirror pods changed (the API pod source's `onMirrorPods`). */
  observeMirrorPods(mirrors: Pod[]): void {
    this.#observing = true;
    this.#replace(mirrors);
    this.trigger();
  }

  /**
   * The mirror pod a static pod's status is written to: same namespace and name, carrying
   * the static pod's hash (upstream `IsMirrorPodOf`); undefined while there is none.
   */
  mirrorPodOf(
    pod: Pod,
  ): { namespace: string; name: string; uid: string } | undefined {
    const namespace = pod.metadata.namespace ?? "default";
    const name = pod.metadata.name ?? "";
    const mirror = this.#mirrors.get(`${namespace}/${name}`);
    const hash = pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
    if (
      !mirror?.metadata.uid || mirror.metadata.deletionTimestamp ||
      mirror.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] !== hash
    ) return undefined;
    return { namespace, name, uid: mirror.metadata.uid };
  }

  #replace(mirrors: Pod[]): void {
    this.#mirrors = new Map(mirrors.map((m) => [fullName(m), m]));
    this.#freshAt = this.#deps.clock.now();
  }

  /** One pass; returns what it planned (tests), undefined before the Node and sources are. */
  async sync(signal?: AbortSignal): Promise<MirrorPlan | undefined> {
    const { api, logger } = this.#deps;
    const uid = this.#deps.nodeUid();
    if (!uid || !(this.#deps.sourcesReady?.() ?? true)) return undefined;
    const opts = signal ? { signal } : {};
    // Without reports from a watch, LIST at most every LIST_PERIOD_MS.
    if (
      !this.#observing &&
      this.#deps.clock.now() - this.#freshAt >= LIST_PERIOD_MS
    ) {
      const list = await api.listPods(
        { fieldSelector: `spec.nodeName=${this.#options.nodeName}` },
        opts,
      );
      this.#replace(list.items.filter(isMirrorPod));
    }
    const plan = planMirrorPods(
      this.#deps.pods().filter(isStaticPod),
      [...this.#mirrors.values()],
      { name: this.#options.nodeName, uid },
      (name) => this.#deps.isTerminatingByFullName?.(name) ?? false,
    );
    for (const d of plan.delete) {
      const name = `${d.namespace}/${d.name}`;
      logger.v(2).info("Deleting a mirror pod", {
        pod: name,
        podUID: d.uid,
        reason: d.reason,
      });
      try {
        await api.deletePod(d.namespace, d.name, {
          gracePeriodSeconds: 0,
          uid: d.uid,
        }, opts);
      } catch (e) {
        // Gone already, or replaced (UID precondition): nothing left to delete.
        if (!(e instanceof ApiStatusError && [404, 409].includes(e.code))) {
          logger.error("Failed deleting a mirror pod", {
            pod: name,
            err: errText(e),
          });
          continue;
        }
      }
      this.#mirrors.delete(name);
    }
    for (const pod of plan.create) {
      const name = fullName(pod);
      logger.info("Creating a mirror pod for static pod", { pod: name });
      try {
        this.#mirrors.set(name, await api.createPod(pod, opts));
      } catch (e) {
        if (signal?.aborted) throw e;
        // Still there from a graceful delete, or an API pod holds the name: next pass.
        const level = e instanceof ApiAlreadyExistsError ? "info" : "error";
        logger[level]("Failed creating a mirror pod", {
          pod: name,
          err: errText(e),
        });
      }
    }
    return plan;
  }

  /** Passes every `periodMs` and on `trigger()` until `signal` aborts; never throws. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#deps;
    const period = this.#options.periodMs ?? 1_000;
    while (!signal.aborted) {
      this.#pending = false;
      let wait = period;
      try {
        // Until the Node is registered and the sources reported, look again soon.
        if (!(await this.sync(signal))) wait = Math.min(period, 1000);
      } catch (e) {
        if (signal.aborted) return;
        logger.error("Mirror pod sync failed", { err: errText(e) });
      }
      if (this.#pending) continue;
      const waker = new AbortController();
      this.#wake = () => waker.abort();
      await clock.sleep(wait, AbortSignal.any([signal, waker.signal]))
        .catch(() => {});
      this.#wake = undefined;
    }
  }
}
