/**
 * Mirror pods (upstream `pkg/kubelet/pod/mirror_client.go` and the mirror steps of
 * `Kubelet.SyncPod` and `HandlePodCleanups`): the API server's read-only copy of each static
 * pod, decided here without I/O.
 *
 * A mirror pod is the static pod with one more annotation, `kubernetes.io/config.mirror` =
 * the static pod's `kubernetes.io/config.hash`, and an owner reference to the Node
 * (`controller: true`; NodeRestriction admits a node's mirror pods only with it). A mirror
 * that is being deleted or carries another hash (the manifest was edited) is deleted with
 * grace 0 and a UID precondition and created again; a mirror pod whose static pod is gone is
 * deleted the same way. While a static pod with the same full name is still stopping its
 * containers (deleted or replaced manifest, within its grace period), its mirror is left
 * alone: neither deleted nor replaced until the kill finished, as upstream (the orphan check
 * of `deleteOrphanedMirrorPods`, and the new static pod starting only after the old one).
 * Mirror pods are never run: the API pod source drops them ({@linkcode isMirrorPod}).
 * @module
 */
import {
  CONFIG_HASH_ANNOTATION,
  CONFIG_MIRROR_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
} from "./static_pod.ts";
import type { Pod } from "../types.ts";

/** True for a mirror pod (it carries `kubernetes.io/config.mirror`). */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] !== undefined;
}

/** True for a pod from a static source (file or http), the pods that get a mirror. */
export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata.annotations?.[CONFIG_SOURCE_ANNOTATION];
  return source !== undefined && source !== "api";
}

/** The Node a mirror pod belongs to. */
export interface MirrorOwner {
  name: string;
  uid: string;
}

/** The mirror pod to create for `staticPod`. */
export function mirrorPodFor(staticPod: Pod, node: MirrorOwner): Pod {
  const annotations = { ...staticPod.metadata.annotations };
  annotations[CONFIG_MIRROR_ANNOTATION] = annotations[CONFIG_HASH_ANNOTATION] ??
    "";
  const { resourceVersion: _rv, ...metadata } = staticPod.metadata;
  return {
    ...structuredClone(staticPod),
    metadata: {
      ...structuredClone(metadata),
      annotations,
      ownerReferences: [{
        apiVersion: "v1",
        kind: "Node",
        name: node.name,
        uid: node.uid,
        controller: true,
      }],
    },
  };
}

/** A delete with grace 0 and a UID precondition. */
export interface MirrorDeletion {
  namespace: string;
  name: string;
  uid: string;
  /** Why, for the log. */
  reason: "deleting" | "outdated" | "orphaned";
}

/** What to do to bring the API server's mirror pods in line with the static pods. */
export interface MirrorPlan {
  /** Deleted first, so that a replaced mirror's name is free again. */
  delete: MirrorDeletion[];
  create: Pod[];
}

function fullName(pod: Pod): string {
  return `${pod.metadata.namespace ?? "default"}/${pod.metadata.name ?? ""}`;
}

/**
 * Plans the mirror pod writes. `mirrors` are the mirror pods bound to this node in the API
 * server; pods without the mirror annotation are ignored (an API pod of the same name is not
 * ours to delete, and creating over it fails with AlreadyExists until it goes). Full names
 * for which `terminating` is true are skipped (a static pod of that name is being killed).
 */
export function planMirrorPods(
  staticPods: readonly Pod[],
  mirrors: readonly Pod[],
  node: MirrorOwner,
  terminating: (fullName: string) => boolean = () => false,
): MirrorPlan {
  const plan: MirrorPlan = { delete: [], create: [] };
  const byName = new Map<string, Pod>();
  for (const m of mirrors) if (isMirrorPod(m)) byName.set(fullName(m), m);
  const wanted = new Set<string>();
  const remove = (m: Pod, reason: MirrorDeletion["reason"]) =>
    plan.delete.push({
      namespace: m.metadata.namespace ?? "default",
      name: m.metadata.name ?? "",
      uid: m.metadata.uid ?? "",
      reason,
    });
  for (const pod of staticPods) {
    if (!isStaticPod(pod)) continue;
    const name = fullName(pod);
    wanted.add(name);
    if (terminating(name)) continue;
    const mirror = byName.get(name);
    if (mirror) {
      const hash = pod.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
      if (mirror.metadata.deletionTimestamp) remove(mirror, "deleting");
      else if (
        mirror.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION] !== hash
      ) {
        remove(mirror, "outdated");
      } else continue;
    }
    plan.create.push(mirrorPodFor(pod, node));
  }
  for (const [name, mirror] of byName) {
    if (!wanted.has(name) && !terminating(name)) remove(mirror, "orphaned");
  }
  return plan;
}
