import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import {
  ApiAlreadyExistsError,
  ApiConflictError,
  ApiNotFoundError,
  ApiStatusError,
} from "./errors.ts";
import { KubeApiClient, STRATEGIC_MERGE_PATCH } from "./kube_api_client.ts";
import { createRestClient } from "./rest_client.ts";

function recordingFetch(answer: (url: string) => Response) {
  const seen: {
    url: string;
    method: string;
    headers: Headers;
    body: string;
  }[] = [];
  const fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    seen.push({
      url,
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: String(init?.body ?? ""),
    });
    return Promise.resolve(answer(url));
  };
  return { seen, fetch: fetch as typeof globalThis.fetch };
}

function status(code: number, reason: string): Response {
  return new Response(
    JSON.stringify({ kind: "Status", reason, message: `it is ${reason}` }),
    { status: code },
  );
}

Deno.test("KubeApiClient sends the upstream verbs, paths, content types and bearer token", async () => {
  const { seen, fetch } = recordingFetch(() => Response.json({ metadata: {} }));
  using rest = createRestClient({ clock: new FakeClock(0) }, {
    server: "https://api.example:6443",
    token: "t0k",
  }, { fetch });
  const api = new KubeApiClient({ rest });
  await api.patchNodeStatus("n1", { status: {} });
  await api.updateLease({
    metadata: { name: "n1", namespace: "kube-node-lease" },
    spec: {},
  });
  await api.createCsr({
    metadata: { name: "c" },
    spec: { request: "", signerName: "s" },
  });
  assert.deepEqual(seen.map((s) => `${s.method} ${s.url}`), [
    "PATCH https://api.example:6443/api/v1/nodes/n1/status",
    "PUT https://api.example:6443/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
    "POST https://api.example:6443/apis/certificates.k8s.io/v1/certificatesigningrequests",
  ]);
  assert.equal(seen[0]!.headers.get("content-type"), STRATEGIC_MERGE_PATCH);
  assert.equal(seen[1]!.headers.get("content-type"), "application/json");
  assert.equal(seen[0]!.headers.get("authorization"), "Bearer t0k");
  assert.equal(JSON.parse(seen[1]!.body).kind, "Lease");
});

Deno.test("createRestClient() maps failure answers to error classes by meaning", async () => {
  const answers: Record<string, Response> = {};
  const { fetch } = recordingFetch((url) => answers[new URL(url).pathname]!);
  using rest = createRestClient({ clock: new FakeClock(0) }, {
    server: "https://api.example",
  }, { fetch });
  const api = new KubeApiClient({ rest });
  answers["/api/v1/nodes/gone"] = status(404, "NotFound");
  assert.equal(await api.getNode("gone"), undefined);
  answers["/api/v1/nodes/x/status"] = status(404, "NotFound");
  await assert.rejects(api.patchNodeStatus("x", {}), ApiNotFoundError);
  answers["/api/v1/nodes"] = status(409, "AlreadyExists");
  await assert.rejects(api.createNode({ metadata: {} }), ApiAlreadyExistsError);
  answers["/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"] = status(
    409,
    "Conflict",
  );
  await assert.rejects(
    api.updateLease({ metadata: { name: "l", namespace: "ns" }, spec: {} }),
    ApiConflictError,
  );
  answers["/api/v1/nodes/other/status"] = status(403, "Forbidden");
  await assert.rejects(api.patchNodeStatus("other", {}), (e) => {
    assert.ok(e instanceof ApiStatusError);
    assert.equal(e.code, 403);
    assert.equal(e.reason, "Forbidden");
    assert.match(e.message, /it is Forbidden/);
    return true;
  });
});

Deno.test("RestClient.reconnect() sends later requests with the new identity", async () => {
  const { seen, fetch } = recordingFetch(() => Response.json({ metadata: {} }));
  using rest = createRestClient({ clock: new FakeClock(0) }, {
    server: "https://a.example",
    token: "old",
  }, { fetch });
  const api = new KubeApiClient({ rest });
  await api.getNode("n1");
  rest.reconnect({ server: "https://b.example", token: "new" });
  await api.getNode("n1");
  assert.deepEqual(
    seen.map((s) => `${s.url} ${s.headers.get("authorization")}`),
    [
      "https://a.example/api/v1/nodes/n1 Bearer old",
      "https://b.example/api/v1/nodes/n1 Bearer new",
    ],
  );
});
