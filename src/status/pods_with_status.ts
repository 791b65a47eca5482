/**
 * The kubelet's pods each with its latest cached status, as `/pods` serves them. Building the
 * list copies every status out of the cache (about 0.1 ms a pod), so the list is kept and
 * rebuilt only when a status changes (the cache's `onChange`) or the pod source hands out
 * other pod objects (it replaces a pod object whenever it changes the pod). An unchanged list
 * is the same array, which lets a caller keep what it derived from it (its JSON).
 *
 * @module
 */

import type { Pod } from "../api/mod.ts";
import type { PodStatusManager } from "./types.ts";

/** What the list reads statuses from; without `onChange` the list is rebuilt on every call. */
export type StatusSource =
  & Pick<PodStatusManager, "getPodStatus">
  & Partial<Pick<PodStatusManager, "onChange">>;

/** A function giving the pods of `source()` with their statuses; `close()` stops listening. */
export interface PodsWithStatus {
  (): readonly Pod[];
  close(): void;
}

function sameItems(a: readonly Pod[], b: readonly Pod[]): boolean {
  return a.length === b.length && a.every((pod, i) => pod === b[i]);
}

/** The pods of `source()` with their cached statuses, rebuilt only after a change. */
export function podsWithStatus(
  source: () => readonly Pod[],
  statuses: StatusSource,
): PodsWithStatus {
  let stale = true;
  let specs: readonly Pod[] = [];
  let list: readonly Pod[] = [];
  const unsubscribe = statuses.onChange?.(() => {
    stale = true;
  });
  const get = () => {
    const current = source();
    if (!stale && unsubscribe && sameItems(current, specs)) return list;
    stale = false;
    specs = [...current];
    list = current.map((pod) => {
      const status = pod.metadata.uid
        ? statuses.getPodStatus(pod.metadata.uid)
        : undefined;
      return status ? { ...pod, status } : pod;
    });
    return list;
  };
  return Object.assign(get, { close: () => unsubscribe?.() });
}
