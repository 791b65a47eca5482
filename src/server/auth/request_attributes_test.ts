import assert from "node:assert/strict";
import { HttpError } from "../http_error.ts";
import { canonicalPath, requestAttributes } from "./request_attributes.ts";

function attrs(method: string, target: string) {
  const { verb, subresource } = requestAttributes({
    method,
    path: canonicalPath(target),
  }, "node-a");
  return `${verb} ${subresource}`;
}

Deno.test("requestAttributes() follows upstream's path → subresource table", () => {
  const cases: Array<[string, string, string]> = [
    ["GET", "/stats/summary", "get stats"],
    ["GET", "/stats", "get stats"],
    ["GET", "/stats/", "get stats"],
    ["GET", "/metrics", "get metrics"],
    ["GET", "/metrics/cadvisor", "get metrics"],
    ["GET", "/metrics/resource?x=1", "get metrics"],
    ["GET", "/logs/", "get log"],
    ["GET", "/logs/syslog", "get log"],
    ["GET", "/spec/", "get spec"],
    ["POST", "/checkpoint/ns/pod/c", "create checkpoint"],
    ["GET", "/pods", "get proxy"],
    ["GET", "/runningpods/", "get proxy"],
    ["GET", "/healthz", "get proxy"],
    ["GET", "/configz", "get proxy"],
    ["GET", "/containerLogs/ns/pod/c", "get proxy"],
    ["HEAD", "/pods", "get proxy"],
    ["PUT", "/pods", "update proxy"],
    ["PATCH", "/pods", "patch proxy"],
    ["DELETE", "/pods", "delete proxy"],
    // Not a subpath: /statsfoo is not /stats, /runningpods is not /run.
    ["GET", "/statsfoo", "get proxy"],
    ["GET", "/metricsx/y", "get proxy"],
  ];
  for (const [method, target, want] of cases) {
    assert.equal(attrs(method, target), want, `${method} ${target}`);
  }
});

Deno.test("requestAttributes() asks for create on streaming endpoints whatever the method", () => {
  for (
    const target of [
      "/exec/ns/pod/c?command=sh",
      "/attach/ns/pod/c",
      "/run/ns/pod/c",
      "/portForward/ns/pod",
      "/exec/ns/pod/uid/c",
    ]
  ) {
    for (const method of ["GET", "POST", "HEAD", "PUT"]) {
      assert.equal(
        attrs(method, target),
        "create proxy",
        `${method} ${target}`,
      );
    }
  }
  // An unknown method has no verb at all, which no authorizer allows.
  assert.equal(attrs("OPTIONS", "/exec/ns/pod/c"), " proxy");
  assert.equal(attrs("TRACE", "/pods"), " proxy");
  assert.equal(
    requestAttributes({ method: "GET", path: "/pods" }, "node-a").name,
    "node-a",
  );
});

Deno.test("requestAttributes() cannot be downgraded by a query", () => {
  assert.equal(attrs("GET", "/exec/ns/pod/c?/stats/=1"), "create proxy");
  assert.equal(attrs("GET", "/exec/ns/pod/c?method=GET"), "create proxy");
  assert.equal(attrs("GET", "/pods?/stats"), "get proxy");
  assert.equal(attrs("GET", "/stats/summary?x=/exec/"), "get stats");
});

Deno.test("canonicalPath() refuses paths a cleaner or a second decoder would read differently", () => {
  const refused = [
    "/stats/../exec/ns/pod/c",
    "/stats/%2e%2e/exec/ns/pod/c",
    "/stats/%2E%2E/exec/ns/pod/c",
    "/stats/.%2e/exec/ns/pod/c",
    "/stats/./summary",
    "/stats/%2e/summary",
    "//exec/ns/pod/c",
    "/stats//summary",
    "/stats%2fsummary",
    "/stats%2Fsummary",
    "/stats/%252e%252e/exec",
    "/stats\\..\\exec",
    "/stats/%5c..%5cexec",
    "/pods%00",
    "/pods%zz",
    "/pods%",
    "stats/summary",
    "https://evil/stats/summary",
    "*",
    "/..",
  ];
  for (const target of refused) {
    assert.throws(
      () => canonicalPath(target),
      (e: unknown) => e instanceof HttpError && e.status === 400,
      target,
    );
  }
});

Deno.test("canonicalPath() decodes plain escapes and keeps a trailing slash", () => {
  assert.equal(canonicalPath("/"), "/");
  assert.equal(canonicalPath("/pods"), "/pods");
  assert.equal(canonicalPath("/runningpods/"), "/runningpods/");
  assert.equal(canonicalPath("/p%6fds?x=..//"), "/pods");
  assert.equal(
    canonicalPath("/stats/summary?only_cpu_and_memory=true"),
    "/stats/summary",
  );
  assert.equal(
    canonicalPath("/containerLogs/ns/p%20o/c"),
    "/containerLogs/ns/p o/c",
  );
  assert.equal(canonicalPath("/stats/..."), "/stats/...");
  // Encoded exec is exec: the decoded path is what gets authorized and routed.
  assert.equal(attrs("GET", "/%65xec/ns/pod/c"), "create proxy");
});
