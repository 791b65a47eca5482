/**
 * Merges the snapshots of every pod source (file, http, api) into incremental
 * {@linkcode PodUpdate}s, the way the kubelet's `PodConfig` does in its incremental mode.
 *
 * Each source reports its full set of pods (`set(source, pods)`); the merger diffs it against
 * what that source reported before and emits REMOVE (pods gone), ADD (new UIDs) and UPDATE
 * (same UID, changed spec, labels, annotations or deletion request) updates, in that order,
 * then RECONCILE for pods whose status alone changed (upstream's: the pod's readiness gates
 * may need a sync).
 * `allSourcesReady()` is true once every configured source has reported at least once:
 * deleting anything before that would kill pods a slow source has simply not listed yet.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import type { Pod } from "../types.ts";
import {
  canonicalJson,
  CONFIG_SEEN_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
} from "../static/static_pod.ts";

/** What happened to a set of pods of one source. */
export type PodOperation = "ADD" | "UPDATE" | "REMOVE" | "SET" | "RECONCILE";

/** One change of the merged pod configuration. */
export interface PodUpdate {
  op: PodOperation;
  /** Source name: "file", "http" or "api". */
  source: string;
  pods: Pod[];
}

/** Options of {@linkcode PodConfig}. */
export interface PodConfigOptions {
  /** Names of the sources that must report before `allSourcesReady()` is true. */
  sources: string[];
  /** Called for every non-empty update, in order. */
  onUpdate?: (update: PodUpdate) => void;
}

/** Merges source snapshots into pod updates and tracks which sources have reported. */
export class PodConfig {
  #clock: Clock;
  #sources: string[];
  #onUpdate: ((update: PodUpdate) => void) | undefined;
  #bySource = new Map<string, Map<string, Pod>>();
  /**
   * The objects each source last handed in, by UID. Sources hand out the same object again
   * for a pod that did not change (the file source keeps its decoded manifests, the API
   * source its watch store) and never change one in place, so the same object again is
   * known unchanged without stamping or comparing it: the periodic relist of 110 manifests
   * costs nothing here, and the stored pod keeps its identity (the `/pods` answer is kept).
   */
  #rawBySource = new Map<string, Map<string, Pod>>();
  #seen = new Set<string>();

  constructor(deps: { clock: Clock }, options: PodConfigOptions) {
    this.#clock = deps.clock;
    this.#sources = [...options.sources];
    this.#onUpdate = options.onUpdate;
  }

  /**
   * Records the full set of pods of `source` and returns the resulting updates (also passed to
   * `onUpdate`). Pods are stamped with `kubernetes.io/config.source` and, on first sight,
   * `kubernetes.io/config.seen`; an unchanged pod keeps its first `seen` time.
   */
  set(source: string, pods: Pod[]): PodUpdate[] {
    this.#seen.add(source);
    const previous = this.#bySource.get(source) ?? new Map<string, Pod>();
    const previousRaw = this.#rawBySource.get(source);
    const next = new Map<string, Pod>();
    const nextRaw = new Map<string, Pod>();
    const added: Pod[] = [];
    const updated: Pod[] = [];
    const reconciled: Pod[] = [];
    for (const raw of pods) {
      const uid = raw.metadata.uid;
      if (!uid || next.has(uid)) continue;
      const old = previous.get(uid);
      nextRaw.set(uid, raw);
      if (old && previousRaw?.get(uid) === raw) {
        next.set(uid, old);
        continue;
      }
      const stamped = this.#stamp(raw, source, old);
      next.set(uid, stamped);
      if (!old) added.push(stamped);
      else if (!samePod(old, stamped)) updated.push(stamped);
      else if (!sameStatus(old, stamped)) reconciled.push(stamped);
    }
    const removed = [...previous.values()].filter((p) =>
      !next.has(p.metadata.uid!)
    );
    this.#bySource.set(source, next);
    this.#rawBySource.set(source, nextRaw);
    const updates: PodUpdate[] = [];
    if (removed.length) updates.push({ op: "REMOVE", source, pods: removed });
    if (added.length) updates.push({ op: "ADD", source, pods: added });
    if (updated.length) updates.push({ op: "UPDATE", source, pods: updated });
    if (reconciled.length) {
      updates.push({ op: "RECONCILE", source, pods: reconciled });
    }
    for (const u of updates) this.#onUpdate?.(u);
    return updates;
  }

  /** True once `source` has reported at least once. */
  sourceSeen(source: string): boolean {
    return this.#seen.has(source);
  }

  /** True once every configured source has reported at least once. */
  allSourcesReady(): boolean {
    return this.#sources.every((s) => this.#seen.has(s));
  }

  /** Every pod currently known, across sources. */
  pods(): Pod[] {
    return [...this.#bySource.values()].flatMap((m) => [...m.values()]);
  }

  /** A full snapshot as a single SET update (for consumers that start late). */
  snapshot(): PodUpdate {
    return { op: "SET", source: "all", pods: this.pods() };
  }

  #stamp(pod: Pod, source: string, old: Pod | undefined): Pod {
    const seen = old?.metadata.annotations?.[CONFIG_SEEN_ANNOTATION] ??
      new Date(this.#clock.now()).toISOString();
    return {
      ...pod,
      metadata: {
        ...pod.metadata,
        annotations: {
          ...pod.metadata.annotations,
          [CONFIG_SOURCE_ANNOTATION]: source,
          [CONFIG_SEEN_ANNOTATION]: seen,
        },
      },
    };
  }
}

/**
 * Equal as the kubelet sees a pod (upstream `podsDifferSemantically`): spec, labels,
 * annotations (the `config.seen` stamp aside) and the deletion request. A new status or
 * resourceVersion alone (the API server echoing the kubelet's own status write) is no update;
 * the stored copy still takes it, and a new status is a RECONCILE.
 */
function samePod(a: Pod, b: Pod): boolean {
  return canonicalJson(semantics(a)) === canonicalJson(semantics(b));
}

function sameStatus(a: Pod, b: Pod): boolean {
  return canonicalJson(a.status ?? {}) === canonicalJson(b.status ?? {});
}

function semantics(pod: Pod): unknown {
  const annotations = { ...pod.metadata.annotations };
  delete annotations[CONFIG_SEEN_ANNOTATION];
  return {
    spec: pod.spec,
    labels: pod.metadata.labels ?? {},
    annotations,
    deletionTimestamp: pod.metadata.deletionTimestamp ?? null,
    deletionGracePeriodSeconds: pod.metadata.deletionGracePeriodSeconds ??
      null,
  };
}
