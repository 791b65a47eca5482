import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { ApiStatusError } from "./errors.ts";
import { STRATEGIC_MERGE_PATCH } from "./kube_api_client.ts";
import { RestPodApi } from "./pod_api.ts";
import { createRestClient } from "./rest_client.ts";

function client(answer: (url: URL, init: RequestInit) => Response) {
  const seen: { method: string; url: URL; init: RequestInit }[] = [];
  const fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    seen.push({ method: init?.method ?? "GET", url, init: init ?? {} });
    return Promise.resolve(answer(url, init ?? {}));
  };
  const rest = createRestClient({ clock: new FakeClock(0) }, {
    server: "https://api.example:6443",
  }, { fetch: fetch as typeof globalThis.fetch });
  return { seen, rest, api: new RestPodApi({ rest }) };
}

/** A body delivered in the given chunks (events split across chunk borders). */
function chunked(chunks: string[]): Response {
  const enc = new TextEncoder();
  return new Response(
    new ReadableStream({
      start(c) {
        for (const s of chunks) c.enqueue(enc.encode(s));
        c.close();
      },
    }),
  );
}

Deno.test("RestPodApi.watchPods() asks for bookmarks from the version and parses split events", async () => {
  const a = JSON.stringify({
    type: "ADDED",
    object: { metadata: { name: "a", resourceVersion: "5" } },
  });
  const b = JSON.stringify({
    type: "BOOKMARK",
    object: { metadata: { resourceVersion: "9" } },
  });
  const { seen, rest, api } = client(() =>
    chunked([a.slice(0, 10), a.slice(10) + "\n" + b.slice(0, 3), b.slice(3)])
  );
  using _ = rest;
  const events = [];
  for await (
    const e of api.watchPods({
      fieldSelector: "spec.nodeName=n1",
      resourceVersion: "4",
      timeoutSeconds: 300,
    })
  ) events.push(`${e.type}@${e.object.metadata.resourceVersion}`);
  assert.deepEqual(events, ["ADDED@5", "BOOKMARK@9"]);
  const q = seen[0]!.url.searchParams;
  assert.equal(seen[0]!.url.pathname, "/api/v1/pods");
  assert.equal(q.get("watch"), "true");
  assert.equal(q.get("fieldSelector"), "spec.nodeName=n1");
  assert.equal(q.get("resourceVersion"), "4");
  assert.equal(q.get("allowWatchBookmarks"), "true");
  assert.equal(q.get("timeoutSeconds"), "300");
});

Deno.test("RestPodApi.watchPods() turns an ERROR event into ApiStatusError (410 Expired)", async () => {
  const { rest, api } = client(() =>
    chunked([
      JSON.stringify({
        type: "ERROR",
        object: {
          kind: "Status",
          code: 410,
          reason: "Expired",
          message: "too old resource version: 4 (90)",
        },
      }) + "\n",
    ])
  );
  using _ = rest;
  await assert.rejects(
    async () => {
      for await (
        const _e of api.watchPods({
          fieldSelector: "spec.nodeName=n1",
          resourceVersion: "4",
          timeoutSeconds: 300,
        })
      ) { /* no event before the error */ }
    },
    (e) => e instanceof ApiStatusError && e.code === 410,
  );
});

Deno.test("RestPodApi patches status as a strategic merge patch and deletes with a UID precondition", async () => {
  const { seen, rest, api } = client((url) =>
    url.pathname.endsWith("/gone")
      ? new Response(JSON.stringify({ reason: "NotFound" }), { status: 404 })
      : Response.json({ metadata: {}, spec: { containers: [] } })
  );
  using _ = rest;
  await api.patchPodStatus("ns", "web", { status: { phase: "Running" } });
  await api.deletePod("ns", "web", { gracePeriodSeconds: 0, uid: "u1" });
  assert.equal(await api.getPod("ns", "gone"), undefined);
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url.pathname}`), [
    "PATCH /api/v1/namespaces/ns/pods/web/status",
    "DELETE /api/v1/namespaces/ns/pods/web",
    "GET /api/v1/namespaces/ns/pods/gone",
  ]);
  assert.equal(
    new Headers(seen[0]!.init.headers).get("content-type"),
    STRATEGIC_MERGE_PATCH,
  );
  assert.deepEqual(JSON.parse(String(seen[1]!.init.body)), {
    apiVersion: "v1",
    kind: "DeleteOptions",
    gracePeriodSeconds: 0,
    preconditions: { uid: "u1" },
  });
});
