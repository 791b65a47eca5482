import assert from "node:assert/strict";
import { makeCertificate } from "../../server/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { FakeClock } from "../../clock/testing.ts";
import {
  BODY_LIMIT,
  getFollowingRedirects,
  http1GetRequest,
  podFetch,
} from "./pod_http.ts";
import { runProbe } from "./probe_handlers.ts";
import { runLifecycleHook } from "../containers/lifecycle_hooks.ts";
import type { Pod } from "../types.ts";

/** What the server saw of a request (copied: a served request's headers go away). */
interface Seen {
  url: string;
  headers: Headers;
}

/** A local HTTPS server with a self-signed certificate nothing trusts. */
function selfSignedServer(seen: Seen[]) {
  const { certPem, keyPem } = makeCertificate({ commonName: "pod" });
  return Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: certPem,
    key: keyPem,
    onListen() {},
  }, (request) => {
    seen.push({ url: request.url, headers: new Headers(request.headers) });
    const path = new URL(request.url).pathname;
    if (path === "/ok") return new Response("fine");
    if (path === "/fail") {
      return new Response("x".repeat(3 * BODY_LIMIT), { status: 503 });
    }
    if (path === "/redirect") {
      return new Response(null, { status: 302, headers: { location: "/ok" } });
    }
    if (path === "/loop") {
      return new Response(null, {
        status: 302,
        headers: { location: "/loop" },
      });
    }
    if (path === "/away-with-body") {
      return new Response("x".repeat(3 * BODY_LIMIT), {
        status: 302,
        headers: { location: "https://elsewhere.invalid/x" },
      });
    }
    if (path === "/away") {
      return new Response(null, {
        status: 301,
        headers: { location: "https://elsewhere.invalid/x" },
      });
    }
    if (path === "/chunked") {
      return new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode("one,"));
            c.enqueue(new TextEncoder().encode("two"));
            c.close();
          },
        }),
        { status: 500 },
      );
    }
    // never answers; the request ends when the client goes away
    return new Promise<Response>((resolve) =>
      request.signal.addEventListener("abort", () => resolve(new Response()))
    );
  });
}

function probeTarget(): Parameters<typeof runProbe>[1] {
  return {
    pod: {
      metadata: { name: "p", namespace: "ns", uid: "u" },
      spec: { containers: [] },
    } as unknown as Pod,
    status: { podIP: "127.0.0.1" },
    container: { name: "c" },
    containerId: "c1",
  };
}

/** Runs an HTTPS httpGet hook against 127.0.0.1:`port`. */
function httpsHook(
  port: number,
  path: string,
  logger: CaptureLogger,
  timeoutSeconds: number,
) {
  return runLifecycleHook(
    { runtime: undefined as never, clock: new FakeClock(), logger },
    {
      pod: probeTarget().pod,
      containerName: "c",
      containerId: "c1",
      handler: { httpGet: { host: "127.0.0.1", path, port, scheme: "HTTPS" } },
    },
    { timeoutSeconds },
  );
}

Deno.test({
  name: "podFetch() speaks HTTPS to a self-signed server without verifying it",
  sanitizeResources: false,
  async fn() {
    const seen: Seen[] = [];
    await using server = selfSignedServer(seen);
    const base = `https://127.0.0.1:${server.addr.port}`;
    // the certificate is not trusted: fetch refuses it
    await assert.rejects(fetch(`${base}/ok`));
    const ok = await podFetch(`${base}/ok?x=1`, {
      headers: { "User-Agent": "kube-probe/1.34", "X-Probe": "yes" },
    });
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), "fine");
    const request = seen.at(-1)!;
    assert.equal(new URL(request.url).search, "?x=1");
    assert.equal(request.headers.get("x-probe"), "yes");
    assert.equal(request.headers.get("user-agent"), "kube-probe/1.34");
    // a body is read up to the limit only
    const failed = await podFetch(`${base}/fail`);
    assert.equal(failed.status, 503);
    assert.equal((await failed.bytes()).length, BODY_LIMIT);
    const chunked = await podFetch(`${base}/chunked`);
    assert.equal(await chunked.text(), "one,two");
    // a timeout aborts the connection
    await assert.rejects(
      podFetch(`${base}/hang`, { signal: AbortSignal.timeout(200) }),
      (e: Error) => e.name === "TimeoutError",
    );
    await assert.rejects(
      podFetch(`https://127.0.0.1:1/ok`),
      /ECONNREFUSED/,
    );
  },
});

Deno.test({
  name:
    "getFollowingRedirects() follows same-host redirects, stops at another host or after 10",
  sanitizeResources: false,
  async fn() {
    const seen: Seen[] = [];
    await using server = selfSignedServer(seen);
    const base = `https://127.0.0.1:${server.addr.port}`;
    const headers = new Headers({ "X-Keep": "1" });
    const moved = await getFollowingRedirects(
      podFetch,
      `${base}/redirect`,
      headers,
    );
    assert.equal(moved.response.status, 200);
    assert.equal(moved.url, `${base}/ok`);
    assert.equal(seen.at(-1)!.headers.get("x-keep"), "1");
    const away = await getFollowingRedirects(podFetch, `${base}/away`, headers);
    assert.equal(away.response.status, 301);
    assert.equal(away.offHostLocation, "https://elsewhere.invalid/x");
    const before = seen.length;
    await assert.rejects(
      getFollowingRedirects(podFetch, `${base}/loop`, headers),
      /stopped after 10 redirects/,
    );
    assert.equal(seen.length - before, 10);
  },
});

Deno.test("getFollowingRedirects() follows only the statuses Go's client follows", async () => {
  for (const status of [300, 301, 302, 303, 304, 305, 307, 308]) {
    const asked: string[] = [];
    const fake = (input: string | URL | Request) => {
      const url = String(input);
      asked.push(new URL(url).pathname);
      return Promise.resolve(
        url.endsWith("/start")
          ? new Response(null, { status, headers: { location: "/next" } })
          : new Response("fine"),
      );
    };
    const got = await getFollowingRedirects(
      fake as typeof fetch,
      "http://127.0.0.1:1/start",
      new Headers(),
    );
    const followed = [301, 302, 303, 307, 308].includes(status);
    assert.deepEqual(
      asked,
      followed ? ["/start", "/next"] : ["/start"],
      `status ${status}`,
    );
    assert.equal(got.response.status, followed ? 200 : status);
  }
});

Deno.test("runProbe(): a 300 with a Location ends there with a ProbeWarning", async () => {
  const fake = () =>
    Promise.resolve(
      new Response("choose", { status: 300, headers: { location: "/a" } }),
    );
  const got = await runProbe(
    { httpGet: { path: "/start", port: 80 } },
    probeTarget(),
    {
      clock: new FakeClock(),
      signal: new AbortController().signal,
      runtime: { execSync: () => Promise.reject(new Error("unused")) },
      fetch: fake as typeof fetch,
    },
  );
  assert.equal(got.result, "success");
  assert.equal(got.probeWarning, true);
  assert.equal(got.output, "Probe terminated redirects, Response body: choose");
});

Deno.test({
  name:
    "runProbe() and runLifecycleHook(): scheme HTTPS against a self-signed pod server",
  sanitizeResources: false,
  async fn() {
    const seen: Seen[] = [];
    await using server = selfSignedServer(seen);
    const port = server.addr.port;
    const deps = {
      clock: new FakeClock(),
      signal: new AbortController().signal,
      runtime: { execSync: () => Promise.reject(new Error("unused")) },
    };
    const httpGet = (path: string) => ({
      httpGet: { path, port, scheme: "HTTPS" as const },
    });
    const ok = await runProbe(httpGet("/redirect"), probeTarget(), deps);
    assert.equal(ok.result, "success", ok.output);
    const failed = await runProbe(httpGet("/fail"), probeTarget(), deps);
    assert.equal(failed.result, "failure");
    assert.equal(failed.output, "HTTP probe failed with statuscode: 503");
    // the body of a redirect not followed is kept, up to the limit
    const away = await runProbe(
      httpGet("/away-with-body"),
      probeTarget(),
      deps,
    );
    assert.equal(away.result, "success");
    assert.equal(away.probeWarning, true);
    assert.equal(
      away.output,
      `Probe terminated redirects, Response body: ${"x".repeat(BODY_LIMIT)}`,
    );
    const hook = await httpsHook(port, "/hooked", new CaptureLogger(), 1);
    // the server never answers /hooked: the hook times out, after its request arrived
    assert.match(hook ?? "", /hooked/);
    assert.equal(seen.at(-1)?.headers.get("user-agent"), "kube-lifecycle/1.34");
  },
});

Deno.test("http1GetRequest() writes the path, Host (the caller's wins) and Connection: close", () => {
  const url = new URL("https://10.0.0.5:8443/a/b?c=d");
  assert.equal(
    http1GetRequest(url, new Headers({ Accept: "*/*" })),
    "GET /a/b?c=d HTTP/1.1\r\nHost: 10.0.0.5:8443\r\naccept: */*\r\nConnection: close\r\n\r\n",
  );
  assert.match(
    http1GetRequest(
      url,
      new Headers({ Host: "svc.local", Connection: "keep-alive" }),
    ),
    /^GET \/a\/b\?c=d HTTP\/1\.1\r\nHost: svc\.local\r\nConnection: close\r\n\r\n$/,
  );
});

Deno.test({
  name:
    "runLifecycleHook(): an HTTPS hook to a plain HTTP server is retried over HTTP",
  sanitizeResources: false,
  async fn() {
    const paths: string[] = [];
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (request) => {
        paths.push(new URL(request.url).pathname);
        return new Response("ok");
      },
    );
    const logger = new CaptureLogger();
    const failure = await httpsHook(server.addr.port, "/plain", logger, 5);
    assert.equal(failure, undefined);
    assert.deepEqual(paths, ["/plain"]);
    assert.match(JSON.stringify(logger.records), /retried with HTTP/);
  },
});
