import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { createHandler, type ServerHost } from "./handler.ts";
import { HEALTHZ_RETRY_MS, runHealthzServer } from "./healthz_server.ts";
import { ListenError, serve } from "./serve.ts";
import { trickleHeaders } from "./testing.ts";

function host(logger: CaptureLogger): ServerHost {
  const clock = new FakeClock();
  return {
    clock,
    logger,
    syncLoop: { latestLoopEntryTime: () => clock.now() },
    resyncIntervalMs: 60_000,
  };
}

const FIELDS = {
  address: "healthzBindAddress",
  addressFlag: "--healthz-bind-address",
  port: "healthzPort",
  portFlag: "--healthz-port",
};

Deno.test("serve() runs the healthz handler on an ephemeral port and resolves once closed", async () => {
  const logger = new CaptureLogger();
  const ac = new AbortController();
  let bound: (addr: Deno.NetAddr) => void = () => {};
  const listening = new Promise<Deno.NetAddr>((r) => (bound = r));
  const served = serve(createHandler(host(logger)), {
    hostname: "127.0.0.1",
    port: 0,
    signal: ac.signal,
    fields: FIELDS,
    logger,
    onListen: (addr) => bound(addr),
  });
  try {
    const { port } = await listening;
    assert.notEqual(port, 0);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.deepEqual([ok.status, await ok.text()], [200, "ok"]);
    const verbose = await fetch(`http://127.0.0.1:${port}/healthz?verbose`);
    assert.match(await verbose.text(), /\[\+\]syncloop ok\n/);
    const pprof = await fetch(`http://127.0.0.1:${port}/debug/pprof/`);
    assert.deepEqual([pprof.status, await pprof.text()], [
      404,
      "404 page not found\n",
    ]);
  } finally {
    ac.abort();
  }
  assert.equal(await served, undefined);
});

Deno.test("runHealthzServer() with healthzPort 0 listens nowhere and resolves at once", async () => {
  const logger = new CaptureLogger();
  let listened = false;
  await runHealthzServer(host(logger), {
    hostname: "127.0.0.1",
    port: 0,
    signal: new AbortController().signal,
    onListen: () => (listened = true),
  });
  assert.equal(listened, false);
  assert.deepEqual(logger.records, []);
});

Deno.test("serve() reports a busy port as a ListenError naming the fields and the fix", async () => {
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  const error = await serve(() => Promise.resolve(new Response("x")), {
    hostname: "127.0.0.1",
    port,
    signal: new AbortController().signal,
    fields: FIELDS,
    logger: new CaptureLogger(),
  }).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof ListenError);
  assert.equal((error.cause as { code?: string }).code, "EADDRINUSE");
  assert.equal(error.address, `127.0.0.1:${port}`);
  assert.match(
    error.message,
    new RegExp(
      `^Cannot listen on "127\\.0\\.0\\.1:${port}" \\(healthzBindAddress:healthzPort\\): the address is already in use; .*--healthz-port.* set healthzPort to 0 to turn this listener off$`,
    ),
  );
});

Deno.test("runHealthzServer() logs a busy port once per attempt and binds when it frees up", async () => {
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  const logger = new CaptureLogger();
  const h = host(logger);
  const clock = h.clock as FakeClock;
  const ac = new AbortController();
  let bound: () => void = () => {};
  const listening = new Promise<void>((r) => (bound = r));
  const running = runHealthzServer(h, {
    hostname: "127.0.0.1",
    port,
    signal: ac.signal,
    onListen: () => bound(),
  });
  try {
    const errors = () => logger.records.filter((r) => r.severity === "error");
    while (clock.pendingSleeps === 0) {
      await new Promise((r) => setTimeout(r, 1));
    }
    assert.equal(errors().length, 1);
    assert.equal(errors()[0]?.msg, "Failed to start healthz server");
    assert.match(String(errors()[0]?.fields.err), /already in use/);
    assert.doesNotMatch(String(errors()[0]?.fields.err), /\n\s+at /);
    // Still busy at the next attempt: one more line, then the port frees up.
    await clock.advance(HEALTHZ_RETRY_MS);
    while (errors().length < 2) await new Promise((r) => setTimeout(r, 1));
    busy.close();
    await clock.advance(HEALTHZ_RETRY_MS);
    await listening;
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.deepEqual([ok.status, await ok.text()], [200, "ok"]);
    assert.equal(errors().length, 2);
  } finally {
    ac.abort();
    await running;
  }
});

Deno.test("runHealthzServer() returns at once for an aborted signal", async () => {
  const logger = new CaptureLogger();
  await runHealthzServer(host(logger), {
    hostname: "127.0.0.1",
    port: 10248,
    signal: AbortSignal.abort(),
  });
  assert.deepEqual(logger.records, []);
});

Deno.test("serve() cuts off header tricklers and oversized headers while answering others", async () => {
  const ac = new AbortController();
  const { promise: listening, resolve } = Promise.withResolvers<
    Deno.NetAddr
  >();
  const done = serve(() => Promise.resolve(new Response("ok")), {
    hostname: "127.0.0.1",
    port: 0,
    signal: ac.signal,
    fields: FIELDS,
    logger: new CaptureLogger(),
    onListen: resolve,
    limits: { headersTimeoutMs: 1_500, maxHeaderBytes: 8_192 },
  });
  const { port } = await listening;
  const url = `http://127.0.0.1:${port}/healthz`;
  const conns = await Promise.all(
    Array.from(
      { length: 40 },
      () => Deno.connect({ hostname: "127.0.0.1", port }),
    ),
  );
  const trickles = trickleHeaders(conns);
  try {
    const t = Date.now();
    assert.equal(await (await fetch(url)).text(), "ok");
    assert.ok(Date.now() - t < 1_000);
    // An oversized header ends the connection without an answer.
    await assert.rejects(
      fetch(url, { headers: { "x-big": "a".repeat(20_000) } }),
    );
    const cut = Math.max(...await Promise.all(trickles));
    assert.ok(cut < 6_000, `tricklers cut off (${cut} ms)`);
    assert.equal(await (await fetch(url)).text(), "ok");
  } finally {
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // closed by the server
      }
    }
    ac.abort();
    await done;
  }
});
