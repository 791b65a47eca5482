import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createHandler, type ServerHost } from "./handler.ts";
import { SYNC_LOOP_MIN_STALE_MS } from "./routes/healthz.ts";

const START = Date.UTC(2026, 0, 1);

function host(
  options: { entered?: number | undefined; resyncIntervalMs?: number } = {},
): ServerHost & { clock: FakeClock; logger: CaptureLogger } {
  const entered = "entered" in options ? options.entered : START;
  return {
    clock: new FakeClock(START),
    logger: new CaptureLogger(),
    syncLoop: { latestLoopEntryTime: () => entered },
    resyncIntervalMs: options.resyncIntervalMs ?? 60_000,
  };
}

async function get(
  handler: (request: Request) => Promise<Response>,
  path: string,
  method = "GET",
): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await handler(
    new Request(`http://127.0.0.1:10248${path}`, { method }),
  );
  return {
    status: response.status,
    body: await response.text(),
    headers: response.headers,
  };
}

Deno.test("createHandler() answers /healthz with a plain ok when every check passes", async () => {
  const r = await get(createHandler(host()), "/healthz");
  assert.equal(r.status, 200);
  assert.equal(r.body, "ok");
  assert.equal(r.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(r.headers.get("x-content-type-options"), "nosniff");
});

Deno.test("createHandler() lists every check with ?verbose on success", async () => {
  const r = await get(createHandler(host()), "/healthz?verbose");
  assert.equal(r.status, 200);
  assert.equal(
    r.body,
    "[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n",
  );
});

Deno.test("createHandler() fails /healthz with 500 and withholds the reason once the sync loop is stale", async () => {
  const h = host();
  const handler = createHandler(h);
  await h.clock.advance(SYNC_LOOP_MIN_STALE_MS + 1);
  const r = await get(handler, "/healthz");
  assert.equal(r.status, 500);
  assert.equal(
    r.body,
    "[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n",
  );
  // The reason goes to the log (verbosity 2), not to the unauthenticated body.
  const record = h.logger.records.find((x) => x.msg === "Health check failed");
  assert.equal(record?.verbosity, 2);
  assert.equal(record?.fields.checks, "syncloop");
  assert.match(
    String(record?.fields.detail),
    /syncloop failed: sync Loop took longer than expected/,
  );
});

Deno.test("createHandler() /healthz?exclude=syncloop skips the check and warns about unknown names", async () => {
  const h = host();
  const handler = createHandler(h);
  await h.clock.advance(SYNC_LOOP_MIN_STALE_MS + 1);
  const r = await get(handler, "/healthz?exclude=syncloop&exclude=nope");
  assert.equal(r.status, 200);
  assert.equal(r.body, "ok");
  const v = await get(handler, "/healthz?verbose&exclude=syncloop");
  assert.equal(
    v.body,
    "[+]ping ok\n[+]log ok\n[+]syncloop excluded: ok\nhealthz check passed\n",
  );
  const w = await get(handler, "/healthz?verbose&exclude=nope");
  assert.equal(w.status, 500);
  assert.match(
    w.body,
    /\nwarn: some health checks cannot be excluded: no matches for "nope"\nhealthz check failed\n$/,
  );
});

Deno.test("createHandler() runs one check per /healthz/<name> and gives its reason", async () => {
  const h = host();
  const handler = createHandler(h);
  for (const name of ["ping", "log", "syncloop"]) {
    const r = await get(handler, `/healthz/${name}`);
    assert.deepEqual([r.status, r.body], [200, "ok"], name);
  }
  await h.clock.advance(SYNC_LOOP_MIN_STALE_MS + 1);
  const r = await get(handler, "/healthz/syncloop");
  assert.equal(r.status, 500);
  assert.equal(
    r.body,
    "internal server error: sync Loop took longer than expected\n",
  );
  assert.equal((await get(handler, "/healthz/ping")).status, 200);
});

Deno.test("createHandler() syncloop allows max(2 × syncFrequency, 5 min) without an iteration", async () => {
  const cases = [
    { resyncIntervalMs: 60_000, limit: 5 * 60_000 },
    { resyncIntervalMs: 10 * 60_000, limit: 20 * 60_000 },
  ];
  for (const { resyncIntervalMs, limit } of cases) {
    const h = host({ resyncIntervalMs });
    const handler = createHandler(h);
    await h.clock.advance(limit);
    assert.equal((await get(handler, "/healthz/syncloop")).status, 200);
    await h.clock.advance(1);
    assert.equal((await get(handler, "/healthz/syncloop")).status, 500);
  }
});

Deno.test("createHandler() syncloop passes before the loop first ran", async () => {
  const h = host({ entered: undefined });
  const handler = createHandler(h);
  await h.clock.advance(60 * 60_000);
  assert.equal((await get(handler, "/healthz")).body, "ok");
});

Deno.test("createHandler() follows the loop's latest entry time", async () => {
  const clock = new FakeClock(START);
  let entered = START;
  const handler = createHandler({
    clock,
    logger: new CaptureLogger(),
    syncLoop: { latestLoopEntryTime: () => entered },
    resyncIntervalMs: 60_000,
  });
  await clock.advance(SYNC_LOOP_MIN_STALE_MS + 1);
  assert.equal((await get(handler, "/healthz")).status, 500);
  entered = clock.now();
  assert.equal((await get(handler, "/healthz")).status, 200);
});

Deno.test("createHandler() serves only the healthz route table (no debug handlers)", async () => {
  const handler = createHandler(host());
  for (
    const path of [
      "/",
      "/healthz/",
      "/healthz/other",
      "/healthzx",
      "/debug/pprof/",
      "/debug/pprof/profile",
      "/metrics",
      "/configz",
      "/pods",
      "/logs/",
      "/readyz",
    ]
  ) {
    const r = await get(handler, path);
    assert.deepEqual([r.status, r.body], [404, "404 page not found\n"], path);
  }
});

Deno.test("createHandler() allows only GET and HEAD", async () => {
  const handler = createHandler(host());
  for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
    const r = await get(handler, "/healthz", method);
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get("allow"), "GET, HEAD");
    assert.equal(r.body, "Method Not Allowed\n");
  }
  const head = await get(handler, "/healthz", "HEAD");
  assert.deepEqual([head.status, head.body], [200, ""]);
  assert.equal(head.headers.get("content-type"), "text/plain; charset=utf-8");
  // An unknown path is a 404 whatever the method.
  assert.equal((await get(handler, "/debug/pprof/", "POST")).status, 404);
});

Deno.test("createHandler() counts a check that throws a non-Error as failed", async () => {
  const handler = createHandler({
    ...host(),
    syncLoop: {
      latestLoopEntryTime: () => {
        throw "boom";
      },
    },
  });
  const r = await get(handler, "/healthz/syncloop");
  assert.deepEqual([r.status, r.body], [500, "internal server error: boom\n"]);
});
