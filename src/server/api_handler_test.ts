import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import type { RequestAttributes } from "./auth/request_attributes.ts";
import type { UserInfo } from "./auth/authenticate.ts";
import {
  type ApiAuth,
  type ApiServerHost,
  createApiHandler,
} from "./api_handler.ts";

function host(): ApiServerHost {
  return {
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    syncLoop: { latestLoopEntryTime: () => undefined },
    resyncIntervalMs: 60_000,
    nodeName: "node-a",
    pods: () => [{ metadata: { name: "web", namespace: "default" } }],
    runningPods: () =>
      Promise.resolve([{
        uid: "u1",
        name: "web",
        namespace: "default",
        containers: [{ name: "app", image: "busybox" }],
      }]),
    config: () => ({
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      port: 10250,
      readOnlyPort: 0,
      healthzPort: 0,
    }),
  };
}

/** Allows user "admin" everything, "reader" only get, and records the questions. */
function fakeAuth(asked: RequestAttributes[]): ApiAuth {
  return {
    authenticate: ({ authorization }) => {
      const name = authorization?.replace(/^Bearer /, "");
      if (name === "broken") return Promise.reject(new Error("webhook down"));
      return Promise.resolve(
        name ? { user: { name, groups: [] } } : { reason: "no credentials" },
      );
    },
    authorizer: {
      authorize: (user: UserInfo, attributes: RequestAttributes) => {
        asked.push(attributes);
        if (user.name === "authz-error") {
          return Promise.reject(new Error("SubjectAccessReview failed"));
        }
        const allowed = user.name === "admin" ||
          (user.name === "reader" && attributes.verb === "get");
        return Promise.resolve({ allowed, reason: "" });
      },
    },
  };
}

async function call(
  handler: ReturnType<typeof createApiHandler>,
  target: string,
  options: { user?: string; method?: string } = {},
) {
  const request = new Request(
    `https://node-a:10250${target.replace(/\?.*/, "")}`,
    {
      method: options.method ?? "GET",
      headers: options.user ? { authorization: `Bearer ${options.user}` } : {},
    },
  );
  const response = await handler(request, { target, peerCertificates: [] });
  return { status: response.status, body: await response.text() };
}

Deno.test("createApiHandler() authenticates, authorizes, then routes", async () => {
  const asked: RequestAttributes[] = [];
  const handler = createApiHandler(host(), { auth: fakeAuth(asked) });
  assert.deepEqual(await call(handler, "/pods"), {
    status: 401,
    body: "Unauthorized\n",
  });
  assert.equal((await call(handler, "/pods", { user: "broken" })).status, 401);
  assert.deepEqual(await call(handler, "/pods", { user: "nobody" }), {
    status: 403,
    body:
      "Forbidden (user=nobody, verb=get, resource=nodes, subresource=proxy)\n",
  });
  assert.deepEqual(
    await call(handler, "/stats/summary", { user: "authz-error" }),
    {
      status: 500,
      body:
        "Authorization error (user=authz-error, verb=get, resource=nodes, subresource=stats)\n",
    },
  );
  const pods = await call(handler, "/pods", { user: "reader" });
  assert.equal(pods.status, 200);
  assert.deepEqual(JSON.parse(pods.body), {
    kind: "PodList",
    apiVersion: "v1",
    metadata: {},
    items: [{ metadata: { name: "web", namespace: "default" } }],
  });
  // Unknown paths are only revealed after authorization.
  assert.equal(
    (await call(handler, "/nothing", { user: "nobody" })).status,
    403,
  );
  assert.equal(
    (await call(handler, "/nothing", { user: "reader" })).status,
    404,
  );
  // A reader may not exec, whatever the method, and path tricks are refused before any check.
  assert.equal(
    (await call(handler, "/exec/default/web/app?command=sh", {
      user: "reader",
    }))
      .status,
    403,
  );
  const before = asked.length;
  for (
    const target of [
      "/stats/../exec/default/web/app",
      "/stats/%2e%2e/exec/default/web/app",
      "//exec/default/web/app",
      "/stats%2f..%2fexec/default/web/app",
    ]
  ) {
    assert.equal(
      (await call(handler, target, { user: "reader" })).status,
      400,
      target,
    );
  }
  assert.equal(asked.length, before);
  assert.equal(
    (await call(handler, "/pods", { user: "reader", method: "POST" })).status,
    403,
  );
  assert.equal(
    (await call(handler, "/pods", { user: "admin", method: "POST" })).status,
    405,
  );
});

Deno.test("createApiHandler() serves healthz, configz and runningpods", async () => {
  const handler = createApiHandler(host(), { auth: fakeAuth([]) });
  assert.deepEqual(await call(handler, "/healthz", { user: "reader" }), {
    status: 200,
    body: "ok",
  });
  assert.equal(
    (await call(handler, "/healthz/syncloop", { user: "reader" })).body,
    "ok",
  );
  const configz = await call(handler, "/configz", { user: "reader" });
  assert.deepEqual(JSON.parse(configz.body), {
    kubeletconfig: { port: 10250, healthzPort: 0 },
  });
  const running = await call(handler, "/runningpods/", { user: "reader" });
  assert.deepEqual(JSON.parse(running.body).items, [{
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: { containers: [{ name: "app", image: "busybox", resources: {} }] },
    status: {},
  }]);
  const head = await call(handler, "/pods", { user: "reader", method: "HEAD" });
  assert.deepEqual(head, { status: 200, body: "" });
  const disabled = createApiHandler(host(), {
    auth: fakeAuth([]),
    enableDebuggingHandlers: false,
  });
  assert.deepEqual(await call(disabled, "/configz", { user: "reader" }), {
    status: 405,
    body: "Debug endpoints are disabled.\n",
  });
  assert.equal((await call(disabled, "/pods", { user: "reader" })).status, 200);
});

Deno.test("createApiHandler() without auth serves only the read-only routes", async () => {
  const handler = createApiHandler(host());
  assert.equal((await call(handler, "/pods")).status, 200);
  assert.equal((await call(handler, "/healthz")).status, 200);
  assert.equal((await call(handler, "/configz")).status, 404);
  assert.equal((await call(handler, "/runningpods/")).status, 404);
  assert.equal((await call(handler, "/exec/a/b/c")).status, 404);
});
