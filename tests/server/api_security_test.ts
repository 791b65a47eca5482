/**
 * The kubelet API's checks, table-driven from its own route table (`apiRoutes`), so a route
 * added later is in every case here or the first test fails until it is given its expected
 * attributes: without credentials (anonymous off) every path is a 401, an identity lacking
 * exactly the one permission a request needs gets a 403, and path tricks never reach a route
 * under weaker attributes than the route's own.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../../src/clock/testing.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import {
  apiRoutes,
  type ApiServerHost,
  createApiHandler,
} from "../../src/server/api_handler.ts";
import { createAuthenticator } from "../../src/server/auth/authenticate.ts";
import {
  createWebhookAuthorizer,
  type SubjectAccessReviewSpec,
} from "../../src/server/auth/authorize.ts";
import { HttpError } from "../../src/server/http_error.ts";

/**
 * What each served path must be authorized as (upstream's table; the streaming endpoints need
 * `create` for every method, stricter than upstream).
 */
const EXPECTED: Readonly<
  Record<string, { subresource: string; alwaysCreate?: true }>
> = {
  "/healthz": { subresource: "proxy" },
  "/healthz/ping": { subresource: "proxy" },
  "/healthz/log": { subresource: "proxy" },
  "/healthz/syncloop": { subresource: "proxy" },
  "/pods": { subresource: "proxy" },
  "/runningpods": { subresource: "proxy" },
  "/runningpods/": { subresource: "proxy" },
  "/configz": { subresource: "proxy" },
  "/metrics": { subresource: "metrics" },
  "/metrics/resource": { subresource: "metrics" },
  "/metrics/probes": { subresource: "metrics" },
  "/metrics/cadvisor": { subresource: "metrics" },
  "/stats/summary": { subresource: "stats" },
  "/containerLogs/": { subresource: "proxy" },
  "/logs/": { subresource: "log" },
  "/exec/": { subresource: "proxy", alwaysCreate: true },
  "/attach/": { subresource: "proxy", alwaysCreate: true },
  "/portForward/": { subresource: "proxy", alwaysCreate: true },
  "/run/": { subresource: "proxy", alwaysCreate: true },
};

/** Upstream paths not served here: still authorized with upstream's attributes before the 404. */
const UNSERVED: ReadonlyArray<readonly [string, string]> = [
  ["/spec/", "spec"],
  ["/checkpoint/default/web/app", "checkpoint"],
  ["/stats/", "stats"],
  ["/debug/pprof/", "proxy"],
  ["/cri/exec/token", "proxy"],
];

/** The method → verb expectation, stated apart from the code's table on purpose. */
const METHOD_VERBS: Readonly<Record<string, string>> = {
  GET: "get",
  HEAD: "get",
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/** A host with every optional part; each part records that its route was reached. */
function recordingHost(reached: string[]): ApiServerHost {
  const hit = <T>(name: string, value: T) => {
    reached.push(name);
    return value;
  };
  const notFound = (name: string) => {
    reached.push(name);
    return Promise.reject(new HttpError(404, "not found"));
  };
  return {
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    syncLoop: {
      latestLoopEntryTime: () => hit("/healthz/syncloop", undefined),
    },
    resyncIntervalMs: 60_000,
    nodeName: "node-a",
    pods: () => hit("/pods", []),
    runningPods: () => Promise.resolve(hit("/runningpods", [])),
    config: () => hit("/configz", { port: 10250 }),
    runtimeCounts: () =>
      Promise.resolve(
        hit("/metrics", { runningPods: 0, containers: {} }),
      ),
    resourceStats: () =>
      Promise.resolve(hit("/metrics/resource", { containers: [] })),
    cadvisorStats: () => Promise.resolve(hit("/metrics/cadvisor", [])),
    statsSummary: () => Promise.resolve(hit("/stats/summary", {})),
    nodeLogs: { logDir: () => hit("/logs/", "/nonexistent") },
    logs: {
      podLogsDir: "/nonexistent",
      containerLog: () => notFound("/containerLogs/"),
      containerRunning: () => Promise.resolve(false),
    },
    streaming: {
      exec: () => notFound("/exec/"),
      attach: () => notFound("/attach/"),
      portForward: () => notFound("/portForward/"),
      run: () => notFound("/run/"),
    },
  };
}

/**
 * The real authenticator (anonymous off, tokens naming their user) and the webhook authorizer
 * over a reviewer whose policy is in the user name: `admin` may do anything, `deny:<verb>/<sub>`
 * anything but that one question, `nobody` nothing.
 */
function securedHandler(host: ApiServerHost, asked: SubjectAccessReviewSpec[]) {
  const clock = new FakeClock();
  const authenticate = createAuthenticator({
    clock,
    tokens: {
      authenticateToken: (token) =>
        Promise.resolve(
          token === "invalid" ? undefined : { name: token, groups: [] },
        ),
    },
  }, { anonymous: false });
  const authorizer = createWebhookAuthorizer({
    clock,
    reviewer: {
      reviewAccess: (spec) => {
        asked.push(spec);
        const { verb, subresource } = spec.resourceAttributes;
        const allowed = spec.user === "admin" ||
          (spec.user.startsWith("deny:") &&
            spec.user !== `deny:${verb}/${subresource}`);
        return Promise.resolve({ allowed });
      },
    },
  }, { allowedTtlMs: 0, deniedTtlMs: 0 });
  return createApiHandler(host, { auth: { authenticate, authorizer } });
}

async function call(
  handler: ReturnType<typeof createApiHandler>,
  target: string,
  options: { token?: string; method?: string } = {},
): Promise<number> {
  // As the listener builds it: the URL parser's view of the raw target.
  const request = new Request(new URL(target, "https://node-a:10250"), {
    method: options.method ?? "GET",
    headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
  });
  const response = await handler(request, { target, peerCertificates: [] });
  await response.body?.cancel();
  return response.status;
}

/** Every (target, method, expected question) the route table gives, plus a method it refuses. */
function cases(host: ApiServerHost) {
  const out: Array<
    { route: string; target: string; method: string; verb: string; sub: string }
  > = [];
  for (const route of apiRoutes(host)) {
    const expected = EXPECTED[route.path];
    assert.ok(expected, `no expected attributes for ${route.path}`);
    const target = route.prefix ? `${route.path}default/web/app` : route.path;
    for (const method of new Set([...route.methods, "DELETE", "PUT"])) {
      const verb = expected.alwaysCreate ? "create" : METHOD_VERBS[method]!;
      out.push({
        route: route.path,
        target,
        method,
        verb,
        sub: expected.subresource,
      });
    }
  }
  for (const [target, sub] of UNSERVED) {
    out.push({ route: "", target, method: "GET", verb: "get", sub });
  }
  return out;
}

Deno.test("apiRoutes() lists exactly the paths with expected attributes", () => {
  const paths = apiRoutes(recordingHost([])).map((r) => r.path).sort();
  assert.deepEqual(paths, Object.keys(EXPECTED).sort());
});

Deno.test("every path and method: 401 without credentials, 403 without its one permission", async () => {
  const reached: string[] = [];
  const asked: SubjectAccessReviewSpec[] = [];
  const host = recordingHost(reached);
  const handler = securedHandler(host, asked);
  for (const c of cases(host)) {
    const what = `${c.method} ${c.target}`;
    assert.equal(
      await call(handler, c.target, { method: c.method }),
      401,
      what,
    );
    assert.equal(
      await call(handler, c.target, { method: c.method, token: "invalid" }),
      401,
      what,
    );
    assert.equal(asked.length, 0, `${what}: nothing asked without a user`);
    assert.equal(
      await call(handler, c.target, { method: c.method, token: "nobody" }),
      403,
      what,
    );
    assert.equal(
      await call(handler, c.target, {
        method: c.method,
        token: `deny:${c.verb}/${c.sub}`,
      }),
      403,
      what,
    );
    assert.equal(reached.join(), "", `${what}: no route reached when denied`);
    // The one question asked is the expected one, on this node.
    for (const spec of asked) {
      assert.deepEqual(spec.resourceAttributes, {
        namespace: "",
        verb: c.verb,
        group: "",
        version: "v1",
        resource: "nodes",
        subresource: c.sub,
        name: "node-a",
      }, what);
    }
    asked.length = 0;
    // With the permission the request gets past the checks.
    const admitted = await call(handler, c.target, {
      method: c.method,
      token: `deny:none/none`,
    });
    assert.ok(admitted !== 401 && admitted !== 403, `${what}: ${admitted}`);
    asked.length = 0;
    reached.length = 0;
  }
  // A method without a verb is denied even to the most privileged user.
  assert.equal(
    await call(handler, "/pods", { method: "PROPFIND", token: "admin" }),
    403,
  );
});

/** Paths a client may try to reach a route while being checked as something else. */
const TRICKS = [
  "//pods",
  "//exec/default/web/app",
  "/exec/../pods",
  "/exec/%2e%2e/pods",
  "/exec/%2E%2E/pods",
  "/pods/../exec/default/web/app",
  "/stats/../exec/default/web/app",
  "/stats/..%2fexec/default/web/app",
  "/stats%2f..%2fexec/default/web/app",
  "/metrics/%2e%2e/exec/default/web/app",
  "/healthz/../exec/default/web/app",
  "/%2e%2e/exec/default/web/app",
  "/./exec/default/web/app",
  "/stats/./../exec/default/web/app",
  "/exec%2Fdefault/web/app",
  "/stats%2Fsummary",
  "/exec%5cdefault/web/app",
  "/exec\\default\\web\\app",
  "/exec%00/default/web/app",
  "/exec%/default/web/app",
  "/%65xec/default/web/app",
  "/EXEC/default/web/app",
  "/exec/default/web/app/",
  "/exec//default/web/app",
  "/pods/",
  "/stats/summary/",
  "/metrics/",
  "/exec;x=1/default/web/app",
  "/stats;/../exec/default/web/app",
  "/stats/summary/..;/..;/exec/default/web/app",
  "/pods;/exec/default/web/app",
  "/pods?/../exec/default/web/app",
  "/stats/summary?x=/../../exec/default/web/app",
  "/pods#/../exec/default/web/app",
  "/stats/summary%3f/../../exec/default/web/app",
  "/exec/default/web/app?command=sh&command=/../../pods",
  "/logs/../exec/default/web/app",
  "/logs/%2e%2e/exec/default/web/app",
  "/logs/..%2fexec/default/web/app",
  "/logs%2f..%2fexec/default/web/app",
  "/logs/../../etc/passwd",
  "/logs/%2e%2e/%2e%2e/etc/passwd",
  "/logs/%2fetc/passwd",
  "/logs//etc/passwd",
  "/logs/pods/../../../etc/passwd",
  "/logs/..;/exec/default/web/app",
];

Deno.test("path tricks never reach a route under weaker attributes than its own", async () => {
  const reached: string[] = [];
  const asked: SubjectAccessReviewSpec[] = [];
  const host = recordingHost(reached);
  const handler = securedHandler(host, asked);
  for (const method of ["GET", "POST"]) {
    for (const target of TRICKS) {
      const what = `${method} ${target}`;
      // Allowed everything: which route answered, checked as what?
      const status = await call(handler, target, { method, token: "admin" });
      assert.ok(reached.length <= 1 && asked.length <= 1, what);
      if (reached.length) {
        const route = reached[0]!;
        const expected = EXPECTED[route]!;
        const { verb, subresource } = asked[0]!.resourceAttributes;
        assert.equal(subresource, expected.subresource, what);
        assert.equal(
          verb,
          expected.alwaysCreate ? "create" : METHOD_VERBS[method],
          what,
        );
      }
      reached.length = 0;
      asked.length = 0;
      // Allowed everything but `create` on proxy: no streaming endpoint, ever.
      const reader = await call(handler, target, {
        method,
        token: "deny:create/proxy",
      });
      assert.ok(
        !reached.some((r) => EXPECTED[r]?.alwaysCreate),
        `${what}: reached ${reached.join()} (status ${reader}, admin ${status})`,
      );
      reached.length = 0;
      asked.length = 0;
    }
  }
});
