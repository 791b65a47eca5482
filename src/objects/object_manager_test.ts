import assert from "node:assert/strict";
import { ApiNotFoundError, ApiStatusError } from "../api/mod.ts";
import type { ConfigMap } from "../api/mod.ts";
import type { Pod } from "../api/mod.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import {
  createPodObjectManager,
  podUpdateRegistrar,
} from "./object_manager.ts";
import { FakeObjectApi } from "./testing.ts";

function pod(uid: string, configMaps: string[], secrets: string[] = []): Pod {
  return {
    metadata: { name: uid, namespace: "ns", uid },
    spec: {
      containers: [{
        name: "c",
        envFrom: secrets.map((name) => ({ secretRef: { name } })),
      }],
      volumes: configMaps.map((name) => ({ name, configMap: { name } })),
    },
  };
}

function cm(name: string, data: Record<string, string>, immutable = false) {
  return {
    metadata: { name, namespace: "ns" },
    data,
    ...(immutable ? { immutable } : {}),
  };
}

async function assertRejects<E extends Error>(
  fn: () => Promise<unknown>,
  cls: new (...args: never[]) => E,
  message?: string,
): Promise<E> {
  let caught: unknown;
  await fn().catch((e) => caught = e);
  assert.ok(caught instanceof cls, `expected ${cls.name}, got ${caught}`);
  if (message !== undefined) assert.equal(caught.message, message);
  return caught;
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) {
    await new Promise((r) => setTimeout(r, 1));
  }
  if (!cond()) throw new Error("condition not reached");
}

Deno.test("Watch: one watch per referenced object, counted by pod, stopped with the last pod", async () => {
  const api = new FakeObjectApi();
  api.put("configmaps", cm("a", { k: "1" }));
  using m = createPodObjectManager({
    api,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  });
  m.registerPod(pod("p1", ["a"]));
  m.registerPod(pod("p2", ["a"]));
  const got = await m.get("configmaps", "ns", "a") as ConfigMap;
  assert.deepStrictEqual(got.data, { k: "1" });
  await until(() => api.watchCount === 1);
  assert.deepStrictEqual(
    api.calls.filter((c) => c.method === "list").length,
    1,
  );

  api.put("configmaps", cm("a", { k: "2" }));
  await until(() => api.calls.length > 0);
  await new Promise((r) => setTimeout(r, 5));
  assert.deepStrictEqual(
    (await m.get("configmaps", "ns", "a") as ConfigMap).data,
    { k: "2" },
  );

  api.remove("configmaps", "ns", "a");
  await new Promise((r) => setTimeout(r, 5));
  await assertRejects(
    () => m.get("configmaps", "ns", "a"),
    ApiNotFoundError,
    'configmap "a" not found',
  );

  m.unregisterPod(pod("p1", ["a"]));
  assert.deepStrictEqual(api.watchCount, 1);
  m.unregisterPod(pod("p2", ["a"]));
  await until(() => api.watchCount === 0);
  // no pod references it any more: read straight from the API server
  const before = api.calls.length;
  await assertRejects(() => m.get("configmaps", "ns", "a"), ApiNotFoundError);
  assert.deepStrictEqual(api.calls.slice(before).map((c) => c.method), ["get"]);
});

Deno.test("Watch: an immutable object is listed once and not watched", async () => {
  const api = new FakeObjectApi();
  api.put("configmaps", cm("frozen", { k: "v" }, true));
  using m = createPodObjectManager({
    api,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  });
  m.registerPod(pod("p1", ["frozen"]));
  assert.deepStrictEqual(
    (await m.get("configmaps", "ns", "frozen") as ConfigMap).data,
    { k: "v" },
  );
  await new Promise((r) => setTimeout(r, 5));
  assert.deepStrictEqual(api.watchCount, 0);
  assert.deepStrictEqual(api.calls.map((c) => c.method), ["list"]);
});

Deno.test("Watch: a forbidden object reads as the API server's 403", async () => {
  const api = new FakeObjectApi();
  api.forbidden.add("secrets/ns/other");
  using m = createPodObjectManager({
    api,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  });
  m.registerPod(pod("p1", [], ["other"]));
  const e = await assertRejects(
    () => m.get("secrets", "ns", "other"),
    ApiStatusError,
  );
  assert.deepStrictEqual(e.code, 403);
});

Deno.test("Cache: answers kept for the TTL, dropped when the pod is registered again", async () => {
  const api = new FakeObjectApi();
  api.put("configmaps", cm("a", { k: "1" }));
  const clock = new FakeClock();
  using m = createPodObjectManager({
    api,
    clock,
    logger: new CaptureLogger(),
  }, { strategy: "Cache", ttlMs: 60_000 });
  const p = pod("p1", ["a"]);
  m.registerPod(p);
  await m.get("configmaps", "ns", "a");
  api.put("configmaps", cm("a", { k: "2" }));
  assert.deepStrictEqual(
    (await m.get("configmaps", "ns", "a") as ConfigMap).data,
    { k: "1" },
  );
  await clock.advance(60_000);
  assert.deepStrictEqual(
    (await m.get("configmaps", "ns", "a") as ConfigMap).data,
    { k: "2" },
  );
  api.put("configmaps", cm("a", { k: "3" }));
  m.registerPod(p);
  assert.deepStrictEqual(
    (await m.get("configmaps", "ns", "a") as ConfigMap).data,
    { k: "3" },
  );
  assert.deepStrictEqual(api.calls.map((c) => c.method), ["get", "get", "get"]);
  assert.deepStrictEqual(api.watchCount, 0);
});

Deno.test("Get: every read goes to the API server", async () => {
  const api = new FakeObjectApi();
  api.put("secrets", { metadata: { name: "s", namespace: "ns" } });
  using m = createPodObjectManager({
    api,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  }, { strategy: "Get" });
  m.registerPod(pod("p1", [], ["s"]));
  await m.get("secrets", "ns", "s");
  await m.get("secrets", "ns", "s");
  await assertRejects(
    () => m.get("secrets", "ns", "missing"),
    ApiNotFoundError,
    'secret "missing" not found',
  );
  assert.deepStrictEqual(api.calls.map((c) => c.method), ["get", "get", "get"]);
});

Deno.test("podUpdateRegistrar: ADD/UPDATE register, REMOVE and a SET without the pod unregister", async () => {
  const api = new FakeObjectApi();
  api.put("configmaps", cm("a", { k: "1" }));
  api.put("configmaps", cm("b", { k: "1" }));
  using m = createPodObjectManager({
    api,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  });
  const removed: string[] = [];
  const feed = podUpdateRegistrar(m, {
    onRemoved: (p) => removed.push(p.metadata.uid ?? ""),
  });
  feed({ op: "ADD", pods: [pod("p1", ["a"]), pod("p2", ["b"])] });
  await until(() => api.watchCount === 2);
  feed({ op: "SET", pods: [pod("p2", ["b"])] });
  await until(() => api.watchCount === 1);
  feed({ op: "UPDATE", pods: [pod("p2", ["a"])] });
  await until(() =>
    api.watchCount === 1 &&
    api.calls.some((c) => c.method === "watch" && c.key.endsWith("/a"))
  );
  feed({ op: "REMOVE", pods: [pod("p2", ["a"])] });
  await until(() => api.watchCount === 0);
  assert.deepEqual(removed, ["p1", "p2"]);
});

Deno.test("Watch: a failed watch keeps serving the last object and relists", async () => {
  const api = new FakeObjectApi();
  api.put("configmaps", cm("a", { k: "1" }));
  api.failWatches.set("configmaps/ns/a", 1);
  const clock = new FakeClock();
  using m = createPodObjectManager({
    api,
    clock,
    logger: new CaptureLogger(),
  });
  m.registerPod(pod("p1", ["a"]));
  await until(() => api.calls.some((c) => c.method === "watch"));
  assert.deepEqual(
    (await m.get("configmaps", "ns", "a") as ConfigMap).data,
    { k: "1" },
  );
  await clock.advance(500);
  await until(() => api.watchCount === 1);
  assert.deepEqual(api.calls.map((c) => c.method), [
    "list",
    "watch",
    "list",
    "watch",
  ]);
});
