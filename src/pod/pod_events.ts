/**
 * How the pod code reports lifecycle events (upstream `pkg/kubelet/events` reasons, recorded
 * against the pod or one of its containers as `kubecontainer.GenerateContainerRef` does). The
 * interface is ours; the kubelet passes its event recorder, tests a recording fake, and code
 * without one gets {@linkcode noPodEvents}.
 * @module
 */
import type { EventType, ObjectReference } from "../api/mod.ts";
import type { Pod } from "./types.ts";

/** Records one event; never blocks, never throws. */
export interface PodEventRecorder {
  event(
    object: ObjectReference,
    type: EventType,
    reason: string,
    message: string,
  ): void;
}

/** Drops every event. */
export const noPodEvents: PodEventRecorder = { event() {} };

/** The pod as an event's involved object. */
export function podReference(pod: Pod): ObjectReference {
  const m = pod.metadata;
  return {
    kind: "Pod",
    apiVersion: "v1",
    namespace: m.namespace ?? "default",
    name: m.name ?? "",
    ...(m.uid ? { uid: m.uid } : {}),
    ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
  };
}

/** A container of the pod: field path `spec.containers{name}` (or the init/ephemeral list). */
export function containerReference(
  pod: Pod,
  containerName: string,
): ObjectReference {
  const named = (list?: { name: string }[]) =>
    list?.some((c) => c.name === containerName) ?? false;
  const list = named(pod.spec.initContainers)
    ? "initContainers"
    : named(pod.spec.ephemeralContainers)
    ? "ephemeralContainers"
    : "containers";
  return {
    ...podReference(pod),
    fieldPath: `spec.${list}{${containerName}}`,
  };
}

/** `name_namespace(uid)`, upstream `format.Pod`. */
export function formatPod(pod: Pod): string {
  const m = pod.metadata;
  return `${m.name}_${m.namespace}(${m.uid})`;
}
