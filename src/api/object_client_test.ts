import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { ObjectClient } from "./object_client.ts";
import { createRestClient } from "./rest_client.ts";

function recording(answer: (url: string) => Response) {
  const seen: { url: string; method: string; body: string }[] = [];
  const fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    seen.push({
      url,
      method: init?.method ?? "GET",
      body: String(init?.body ?? ""),
    });
    return Promise.resolve(answer(url));
  };
  return { seen, fetch: fetch as typeof globalThis.fetch };
}

function client(answer: (url: string) => Response) {
  const { seen, fetch } = recording(answer);
  const rest = createRestClient(
    { clock: new FakeClock() },
    { server: "https://api:6443" },
    { fetch },
  );
  return { seen, objects: new ObjectClient({ rest }), rest };
}

Deno.test("ObjectClient: GET by name, LIST and WATCH narrowed to the name, TokenRequest", async () => {
  const { seen, objects, rest } = client((url) => {
    if (url.includes("watch=true")) {
      return new Response(
        [
          { type: "MODIFIED", object: { metadata: { name: "a b" } } },
          { type: "BOOKMARK", object: { metadata: { resourceVersion: "9" } } },
        ].map((e) => JSON.stringify(e)).join("\n") + "\n",
      );
    }
    if (url.includes("fieldSelector")) {
      return Response.json({
        metadata: { resourceVersion: "7" },
        items: [{ metadata: { name: "a b" } }],
      });
    }
    return Response.json({ metadata: { name: "x" }, status: { token: "t" } });
  });
  using _ = rest;
  await objects.getObject("secrets", "ns", "s1");
  const list = await objects.listObject("configmaps", "ns", "a b");
  assert.deepEqual(list, {
    object: { metadata: { name: "a b" } },
    resourceVersion: "7",
  });
  const events = [];
  for await (
    const e of objects.watchObject("configmaps", "ns", "a b", "7", {
      timeoutSeconds: 30,
    })
  ) events.push(e.type);
  assert.deepEqual(events, ["MODIFIED", "BOOKMARK"]);
  await objects.createToken("ns", "default", {
    spec: { audiences: ["api"], expirationSeconds: 3607 },
  });
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), [
    "GET https://api:6443/api/v1/namespaces/ns/secrets/s1",
    "GET https://api:6443/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Da%20b",
    "GET https://api:6443/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Da%20b&watch=true&allowWatchBookmarks=true&resourceVersion=7&timeoutSeconds=30",
    "POST https://api:6443/api/v1/namespaces/ns/serviceaccounts/default/token",
  ]);
  assert.deepEqual(JSON.parse(seen[3]!.body), {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { audiences: ["api"], expirationSeconds: 3607 },
  });
});
