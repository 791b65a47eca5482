import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import {
  createReloadingReviewClient,
  createReviewClient,
  loadReviewConnection,
  type ReviewConnection,
} from "./review_client.ts";

interface Seen {
  url: string;
  authorization: string | null;
  body: Record<string, unknown>;
}

function fakeFetch(seen: Seen[], status = 201): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const body = JSON.parse(String(init?.body));
    seen.push({
      url: String(input),
      authorization: headers.get("authorization"),
      body,
    });
    const answer = body.kind === "TokenReview"
      ? {
        status: { authenticated: true, user: { username: "u", groups: ["g"] } },
      }
      : { status: { allowed: false, denied: true, reason: "no" } };
    return Promise.resolve(new Response(JSON.stringify(answer), { status }));
  }) as typeof fetch;
}

Deno.test("createReviewClient() posts TokenReviews and SubjectAccessReviews", async () => {
  const seen: Seen[] = [];
  const client = createReviewClient(
    { server: "https://api:6443", token: "kubelet-token" },
    { fetch: fakeFetch(seen) },
  );
  try {
    assert.deepEqual(await client.reviewToken("t1"), {
      authenticated: true,
      user: { username: "u", groups: ["g"] },
    });
    const spec = {
      resourceAttributes: {
        namespace: "",
        verb: "get",
        group: "",
        version: "v1",
        resource: "nodes",
        subresource: "proxy",
        name: "n",
      },
      user: "alice",
      groups: [],
    };
    assert.deepEqual(await client.reviewAccess(spec), {
      allowed: false,
      denied: true,
      reason: "no",
    });
    assert.equal(
      seen[0]?.url,
      "https://api:6443/apis/authentication.k8s.io/v1/tokenreviews",
    );
    assert.deepEqual(seen[0]?.body.spec, { token: "t1" });
    assert.equal(
      seen[1]?.url,
      "https://api:6443/apis/authorization.k8s.io/v1/subjectaccessreviews",
    );
    assert.deepEqual(seen[1]?.body.spec, spec);
    assert.equal(seen[1]?.authorization, "Bearer kubelet-token");
  } finally {
    client.close();
  }
  const failing = createReviewClient({ server: "https://api" }, {
    fetch: fakeFetch([], 403),
  });
  try {
    await assert.rejects(failing.reviewToken("x"), /answered 403/);
  } finally {
    failing.close();
  }
});

Deno.test("createReloadingReviewClient() picks up rotated credentials, keeping the last good ones", async () => {
  const clock = new FakeClock();
  const seen: Seen[] = [];
  let next: ReviewConnection | Error = { server: "https://api", token: "one" };
  const client = createReloadingReviewClient({
    server: "https://api",
    token: "one",
  }, {
    clock,
    refreshMs: 60_000,
    fetch: fakeFetch(seen),
    load: () =>
      next instanceof Error ? Promise.reject(next) : Promise.resolve(next),
  });
  try {
    await client.reviewToken("a");
    next = { server: "https://api", token: "two" };
    await client.reviewToken("b"); // within the refresh period: still "one"
    await clock.advance(60_000);
    await client.reviewToken("c");
    next = new Error("kubeconfig unreadable");
    await clock.advance(60_000);
    await client.reviewToken("d");
    assert.deepEqual(seen.map((s) => s.authorization), [
      "Bearer one",
      "Bearer one",
      "Bearer two",
      "Bearer two",
    ]);
  } finally {
    client.close();
  }
});

Deno.test("loadReviewConnection() reads the current context, data fields before files, files relative to the kubeconfig", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-review-" });
  try {
    await Deno.writeTextFile(`${dir}/client.crt`, "CERT");
    await Deno.writeTextFile(`${dir}/token`, "tok\n");
    await Deno.writeTextFile(
      `${dir}/kubeconfig`,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- {name: other, cluster: {server: 'https://other'}}",
        `- {name: c, cluster: {server: 'https://api:6443/', certificate-authority-data: ${
          btoa("CA")
        }}}`,
        "users:",
        `- {name: u, user: {client-certificate: client.crt, client-key-data: ${
          btoa("KEY")
        }, tokenFile: token}}`,
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
        "",
      ].join("\n"),
    );
    assert.deepEqual(await loadReviewConnection(`${dir}/kubeconfig`), {
      server: "https://api:6443",
      caPem: "CA",
      certPem: "CERT",
      keyPem: "KEY",
      token: "tok",
    });
    await Deno.writeTextFile(`${dir}/empty`, "apiVersion: v1\nkind: Config\n");
    await assert.rejects(loadReviewConnection(`${dir}/empty`), TypeError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
