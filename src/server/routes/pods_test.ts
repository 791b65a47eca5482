import assert from "node:assert/strict";
import { type PodsHost, podsRoute } from "./pods.ts";

function host(pods: () => readonly unknown[]): PodsHost {
  return {
    pods,
    runningPods: () => Promise.resolve([]),
    config: () => ({}),
  };
}

async function names(route: ReturnType<typeof podsRoute>): Promise<string[]> {
  const response = await route(
    new Request("https://node/pods"),
    new URL("https://node/pods"),
  );
  assert.equal(response.headers.get("content-type"), "application/json");
  const list = await response.json();
  assert.equal(list.kind, "PodList");
  return list.items.map((p: { metadata: { name: string } }) => p.metadata.name);
}

Deno.test("podsRoute() serialises a list once and a new list again", async () => {
  let serialised = 0;
  const pod = (name: string) => ({
    toJSON: () => {
      serialised++;
      return { metadata: { name } };
    },
  });
  let items = [pod("a")];
  const route = podsRoute(host(() => items));
  assert.deepEqual(await names(route), ["a"]);
  assert.deepEqual(await names(route), ["a"]);
  assert.equal(serialised, 1);
  items = [...items, pod("b")];
  assert.deepEqual(await names(route), ["a", "b"]);
  assert.equal(serialised, 3);
});

Deno.test("podsRoute() lists pods without per-item type fields, as upstream", async () => {
  const route = podsRoute(host(() => [{
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "a" },
  }]));
  const response = await route(
    new Request("https://node/pods"),
    new URL("https://node/pods"),
  );
  assert.deepEqual((await response.json()).items, [{
    metadata: { name: "a" },
  }]);
});
