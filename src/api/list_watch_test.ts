import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { ApiStatusError } from "./errors.ts";
import { NodeWatchClient } from "./node_watch_api.ts";
import { createRestClient } from "./rest_client.ts";
import { ServiceClient } from "./service_api.ts";

function rest(answer: (url: URL) => Response) {
  const seen: URL[] = [];
  const fetch = (input: string | URL | Request) => {
    const url = new URL(String(input));
    seen.push(url);
    return Promise.resolve(answer(url));
  };
  const client = createRestClient({ clock: new FakeClock(0) }, {
    server: "https://api.example:6443",
  }, { fetch: fetch as typeof globalThis.fetch });
  return { seen, client };
}

Deno.test("NodeWatchClient lists and watches only the node of its name", async () => {
  const { seen, client } = rest((url) =>
    url.searchParams.get("watch") === "true"
      ? new Response(
        JSON.stringify({
          type: "MODIFIED",
          object: { metadata: { name: "n1", resourceVersion: "8" } },
        }) + "\n",
      )
      : Response.json({
        metadata: { resourceVersion: "7" },
        items: [{ metadata: { name: "n1" } }],
      })
  );
  using _ = client;
  const api = new NodeWatchClient({ rest: client });
  const list = await api.listOwnNode("n1");
  assert.deepEqual(list, {
    items: [{ metadata: { name: "n1" } }],
    resourceVersion: "7",
  });
  const events = [];
  for await (
    const e of api.watchOwnNode("n1", "7", { timeoutSeconds: 120 })
  ) events.push(`${e.type}@${e.object.metadata?.resourceVersion}`);
  assert.deepEqual(events, ["MODIFIED@8"]);
  for (const url of seen) {
    assert.equal(url.pathname, "/api/v1/nodes");
    assert.equal(url.searchParams.get("fieldSelector"), "metadata.name=n1");
  }
  const watch = seen[1]!.searchParams;
  assert.equal(watch.get("resourceVersion"), "7");
  assert.equal(watch.get("allowWatchBookmarks"), "true");
  assert.equal(watch.get("timeoutSeconds"), "120");
});

Deno.test("ServiceClient leaves headless Services out and throws a watch's ERROR event", async () => {
  const { seen, client } = rest((url) =>
    url.searchParams.get("watch") === "true"
      ? new Response(
        JSON.stringify({
          type: "ERROR",
          object: { code: 410, reason: "Expired", message: "too old" },
        }) + "\n",
      )
      : Response.json({ metadata: {}, items: [] })
  );
  using _ = client;
  const api = new ServiceClient({ rest: client });
  assert.deepEqual(await api.listServices(), {
    items: [],
    resourceVersion: "",
  });
  await assert.rejects(
    async () => {
      for await (const _e of api.watchServices("3", { timeoutSeconds: 60 })) {
        // drain
      }
    },
    (e) => e instanceof ApiStatusError && e.code === 410,
  );
  for (const url of seen) {
    assert.equal(url.pathname, "/api/v1/services");
    assert.equal(url.searchParams.get("fieldSelector"), "spec.clusterIP!=None");
  }
});
