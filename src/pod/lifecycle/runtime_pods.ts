/**
 * The runtime's running pods, for housekeeping's orphan clean-up (upstream
 * `runtimeCache.GetPods`): pods with a running container or a ready sandbox, grouped by the
 * pod UID label. Objects without that label were not created by a kubelet and are ignored.
 *
 * @module
 */

import type { RuntimeService } from "../../runtime/mod.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "../runtime_labels.ts";
import type { Pod } from "../types.ts";

/** A pod as the runtime knows it. */
export interface RunningPod {
  uid: string;
  name: string;
  namespace: string;
  /** Its running containers: name and the image the runtime reports (upstream `ToAPIPod`). */
  containers?: { name: string; image: string }[];
}

/** Options of {@linkcode listRunningPods}. */
export interface ListRunningPodsOptions {
  signal?: AbortSignal;
  /** Which labelled objects belong to this kubelet (default: all); tests sharing a runtime narrow it. */
  owns?: (labels: Readonly<Record<string, string>>) => boolean;
}

const POD_NAME_LABEL = "io.kubernetes.pod.name";
const POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace";

/** Lists the pods that have a running container or a ready sandbox. */
export async function listRunningPods(
  runtime: Pick<RuntimeService, "listContainers" | "listPodSandbox">,
  options: ListRunningPodsOptions = {},
): Promise<RunningPod[]> {
  const call = options.signal ? { signal: options.signal } : {};
  const pods = new Map<string, RunningPod>();
  const add = (labels: Readonly<Record<string, string>>) => {
    const uid = labels[POD_UID_LABEL];
    if (uid === undefined || pods.has(uid)) return;
    if (options.owns && !options.owns(labels)) return;
    pods.set(uid, {
      uid,
      name: labels[POD_NAME_LABEL] ?? "",
      namespace: labels[POD_NAMESPACE_LABEL] ?? "",
      containers: [],
    });
  };
  const [{ items }, { containers }] = await Promise.all([
    runtime.listPodSandbox({ filter: { state: { state: 0 } } }, call),
    runtime.listContainers({ filter: { state: { state: 1 } } }, call),
  ]);
  for (const s of items) if (s.state === 0) add(s.labels);
  for (const c of containers) {
    if (c.state !== 1) continue;
    add(c.labels);
    const name = c.labels[CONTAINER_NAME_LABEL];
    const pod = pods.get(c.labels[POD_UID_LABEL] ?? "");
    if (pod && name !== undefined) {
      pod.containers?.push({ name, image: c.image?.image ?? "" });
    }
  }
  return [...pods.values()];
}

/** A stand-in pod for a runtime-only pod: identity only, no containers in its spec. */
export function runningPodStandIn(pod: RunningPod): Pod {
  return {
    metadata: { uid: pod.uid, name: pod.name, namespace: pod.namespace },
    spec: { containers: [] },
  };
}
