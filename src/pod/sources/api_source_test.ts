import assert from "node:assert/strict";
import { ApiStatusError } from "../../api/mod.ts";
import { FakePodApi } from "../../api/testing.ts";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { Pod } from "../types.ts";
import { createApiSource } from "./api_source.ts";

function pod(name: string, nodeName = "n1", extra: Partial<Pod> = {}): Pod {
  return {
    metadata: { name, namespace: "default", ...extra.metadata },
    spec: { nodeName, containers: [{ name: "c", image: "busybox" }] },
  };
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) {
    await new Promise((r) => setTimeout(r, 1));
  }
  assert.ok(ok(), `timed out waiting for ${what}`);
}

function setup() {
  const api = new FakePodApi();
  const clock = new FakeClock();
  const snapshots: string[][] = [];
  const mirrors: string[][] = [];
  const source = createApiSource({
    api,
    clock,
    logger: new CaptureLogger(),
    random: () => 0,
  }, {
    nodeName: "n1",
    onSnapshot: (pods) =>
      snapshots.push(pods.map((p) => p.metadata.name!).sort()),
    onMirrorPods: (pods) => mirrors.push(pods.map((p) => p.metadata.name!)),
  });
  const stop = new AbortController();
  const last = () => snapshots.at(-1)?.join(",");
  return { api, clock, source, stop, snapshots, mirrors, last };
}

Deno.test("api source lists the node's pods, then follows the watch; mirror pods go aside", async () => {
  const { api, source, stop, mirrors, last } = setup();
  api.put(pod("a"));
  api.put(pod("other", "n2"));
  api.put(pod("mirror", "n1", {
    metadata: { annotations: { "kubernetes.io/config.mirror": "h" } },
  }));
  const running = source.run(stop.signal);
  await until("list", () => last() === "a");
  assert.deepEqual(mirrors.at(-1), ["mirror"]);
  assert.equal(api.calls[0]!.name, "spec.nodeName=n1");
  api.put(pod("b"));
  await until("watch add", () => last() === "a,b");
  api.put(pod("elsewhere", "n2"));
  api.remove("default", "a");
  await until("watch delete", () => last() === "b");
  stop.abort();
  await running;
});

Deno.test("api source resumes a dropped watch from the last version without relisting", async () => {
  const { api, source, stop, last } = setup();
  api.put(pod("a"));
  const running = source.run(stop.signal);
  await until("list", () => last() === "a");
  api.put(pod("b"));
  await until("b", () => last() === "a,b");
  api.disconnectWatches();
  api.put(pod("c"));
  await until("c after resume", () => last() === "a,b,c");
  const lists = api.calls.filter((c) => c.method === "listPods").length;
  const watches = api.calls.filter((c) => c.method === "watchPods");
  assert.equal(lists, 1);
  assert.equal(watches.length, 2);
  // resumed from the version of b, so c (and only c) was replayed
  assert.equal(Number(watches[1]!.name), Number(watches[0]!.name) + 1);
  stop.abort();
  await running;
});

Deno.test("api source relists on 410 Gone and backs off on other watch failures", async () => {
  const { api, clock, source, stop, last } = setup();
  api.put(pod("a"));
  api.injectError(
    "watchPods",
    new ApiStatusError("unavailable", { code: 503 }),
  );
  const running = source.run(stop.signal);
  await until("list", () => last() === "a");
  await until("backing off", () => clock.pendingSleeps === 1);
  assert.equal(api.calls.filter((c) => c.method === "watchPods").length, 1);
  await clock.advance(800);
  await until(
    "rewatch",
    () => api.calls.filter((c) => c.method === "watchPods").length === 2,
  );
  // History compacted while disconnected: the resume gets 410 and relists.
  api.disconnectWatches();
  api.put(pod("b"));
  api.compact();
  // the stream ended before any event: the source pauses before resuming
  await until("pause", () => clock.pendingSleeps === 1);
  await clock.advance(1_600);
  await until(
    "relist",
    () => api.calls.filter((c) => c.method === "listPods").length === 2,
  );
  await until("b", () => last() === "a,b");
  stop.abort();
  await running;
});

Deno.test("api source reports deletionTimestamp updates as pod changes", async () => {
  const api = new FakePodApi();
  const stored = api.put(pod("a"));
  const seen: Pod[][] = [];
  const source = createApiSource({
    api,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  }, { nodeName: "n1", onSnapshot: (p) => seen.push(p) });
  const stop = new AbortController();
  const running = source.run(stop.signal);
  await until("list", () => seen.length === 1);
  await api.deletePod("default", "a", {
    gracePeriodSeconds: 5,
    uid: stored.metadata.uid!,
  });
  await until("deletion", () => seen.length === 2);
  assert.equal(seen[1]![0]!.metadata.deletionGracePeriodSeconds, 5);
  assert.ok(seen[1]![0]!.metadata.deletionTimestamp);
  stop.abort();
  await running;
});
