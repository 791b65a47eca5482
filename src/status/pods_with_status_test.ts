import assert from "node:assert/strict";
import type { Pod, PodStatus } from "../api/mod.ts";
import { createPodStatusManager } from "./pod_status_manager.ts";
import { podsWithStatus } from "./pods_with_status.ts";

function pod(uid: string, image = "pause"): Pod {
  return {
    metadata: { name: uid, namespace: "default", uid },
    spec: { containers: [{ name: "c", image }] },
  } as Pod;
}

const running: PodStatus = { phase: "Running" };

function setup() {
  const statuses = createPodStatusManager();
  let pods: Pod[] = [pod("a"), pod("b")];
  const list = podsWithStatus(() => pods, statuses);
  return {
    statuses,
    list,
    setPods: (next: Pod[]) => {
      pods = next;
    },
    current: () => pods,
  };
}

const phases = (pods: readonly Pod[]) =>
  pods.map((p) => `${p.metadata.uid}:${p.status?.phase ?? "-"}`);

Deno.test("podsWithStatus() hands out the same list until something changes", () => {
  const { statuses, list, current } = setup();
  statuses.setPodStatus(current()[0]!, running);
  const first = list();
  assert.deepEqual(phases(first), ["a:Running", "b:-"]);
  assert.equal(list(), first);
  // an equal status is no change
  statuses.setPodStatus(current()[0]!, running);
  assert.equal(list(), first);
});

Deno.test("podsWithStatus() reflects a status set, changed and removed", () => {
  const { statuses, list, current } = setup();
  const before = list();
  statuses.setPodStatus(current()[1]!, { phase: "Pending" });
  const pending = list();
  assert.notEqual(pending, before);
  assert.deepEqual(phases(pending), ["a:-", "b:Pending"]);
  statuses.setPodStatus(current()[1]!, running);
  assert.deepEqual(phases(list()), ["a:-", "b:Running"]);
  statuses.removePod("b");
  assert.deepEqual(phases(list()), ["a:-", "b:-"]);
});

Deno.test("podsWithStatus() reflects pods added, removed and replaced by the source", () => {
  const { statuses, list, setPods, current } = setup();
  statuses.setPodStatus(current()[0]!, running);
  list();
  setPods([...current(), pod("c")]);
  assert.deepEqual(phases(list()), ["a:Running", "b:-", "c:-"]);
  setPods(current().filter((p) => p.metadata.uid !== "b"));
  assert.deepEqual(phases(list()), ["a:Running", "c:-"]);
  // the source replaces a pod object when it changes the pod
  setPods([pod("a", "busybox"), current()[1]!]);
  const replaced = list();
  assert.equal(replaced[0]!.spec.containers[0]!.image, "busybox");
  assert.equal(replaced[0]!.status?.phase, "Running");
});

Deno.test("podsWithStatus() rebuilds on every call when the statuses cannot be watched", () => {
  const cache = new Map<string, PodStatus>();
  const list = podsWithStatus(() => [pod("a")], {
    getPodStatus: (uid) => cache.get(uid),
  });
  assert.deepEqual(phases(list()), ["a:-"]);
  cache.set("a", running);
  assert.deepEqual(phases(list()), ["a:Running"]);
});

Deno.test("podsWithStatus() close() stops listening to the statuses", () => {
  let listeners = 0;
  const list = podsWithStatus(() => [], {
    getPodStatus: () => undefined,
    onChange: () => {
      listeners++;
      return () => listeners--;
    },
  });
  assert.equal(listeners, 1);
  list.close();
  assert.equal(listeners, 0);
});
