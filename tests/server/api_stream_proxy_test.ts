/**
 * The upgrade proxy's answers other than a 101, over real TLS and sockets: a runtime error is
 * relayed with its body and the connection closed (nothing more rides on a failed upgrade),
 * a redirect is relayed and never followed, an unreachable streaming server is a 502 naming
 * it, and the client's credentials never reach the runtime.
 */
import assert from "node:assert/strict";
import { CaptureLogger } from "../../src/log/testing.ts";
import { runApiServer, type TlsLimits } from "../../src/server/mod.ts";
import {
  ALLOW_ALL,
  BASE_CONFIG,
  freePort,
  OPEN_CONFIG,
  testHost,
} from "./_helpers.ts";

/** A one-shot streaming server: records the request head, answers `answer`, stays open. */
function fakeRuntime(answer: string) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const heads: string[] = [];
  let after = "";
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      const buf = new Uint8Array(8192);
      let head = "";
      while (!head.includes("\r\n\r\n")) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        head += new TextDecoder().decode(buf.subarray(0, n));
      }
      heads.push(head.slice(0, head.indexOf("\r\n\r\n") + 4));
      after += head.slice(head.indexOf("\r\n\r\n") + 4);
      await conn.write(new TextEncoder().encode(answer)).catch(() => {});
      for (;;) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        after += new TextDecoder().decode(buf.subarray(0, n));
      }
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/exec/tok`,
    heads,
    /** What the client sent after its request head. */
    after: () => after,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // closed by the proxy already
        }
      }
    },
  };
}

/** Sends an exec upgrade and reads until the server closes (or 5 s pass). */
async function upgrade(port: number, caPem: string): Promise<
  { text: string; closed: boolean }
> {
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port,
    caCerts: [caPem],
  });
  await conn.write(new TextEncoder().encode(
    "POST /exec/default/web/app?command=ls&output=1 HTTP/1.1\r\nHost: node-a\r\n" +
      "Authorization: Bearer secret-token\r\nConnection: Upgrade\r\n" +
      "Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n",
  ));
  let text = "";
  let closed = false;
  const timer = setTimeout(() => conn.close(), 5_000);
  const buf = new Uint8Array(8192);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) {
        closed = true;
        break;
      }
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } catch {
    // closed by the timer: the server kept the connection open
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
  return { text, closed };
}

async function withApi(
  streamUrl: string,
  fn: (port: number, caPem: string) => Promise<void>,
  limits: TlsLimits = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kts-api-proxy-" });
  const ac = new AbortController();
  const { promise, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const host = {
    ...testHost(new CaptureLogger()),
    streaming: {
      exec: () => Promise.resolve(streamUrl),
      attach: () => Promise.resolve(streamUrl),
      portForward: () => Promise.resolve(streamUrl),
      run: () => Promise.resolve(new Uint8Array()),
    },
  };
  const done = runApiServer(host, {
    hostname: "node-a",
    config: {
      ...BASE_CONFIG,
      ...OPEN_CONFIG,
      port: freePort(),
      certDir: `${dir}/pki`,
    },
    reviewClient: ALLOW_ALL,
    limits,
    signal: ac.signal,
    onListen: resolve,
  });
  try {
    const addr = await promise;
    await fn(addr.port, await Deno.readTextFile(`${dir}/pki/kubelet.crt`));
  } finally {
    ac.abort();
    await done;
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a runtime error is relayed with its body, then the connection is closed", async () => {
  const runtime = fakeRuntime(
    "HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nnope!",
  );
  try {
    await withApi(runtime.url, async (port, caPem) => {
      const { text, closed } = await upgrade(port, caPem);
      assert.match(text, /^HTTP\/1\.1 404 Not Found\r\n[^]*\r\n\r\nnope!$/);
      assert.ok(closed, "the kubelet kept the failed upgrade open");
      assert.equal(runtime.heads.length, 1);
      const head = runtime.heads[0]!;
      assert.match(head, /^POST \/exec\/tok HTTP\/1\.1\r\n/);
      assert.match(head, /\r\nUpgrade: SPDY\/3\.1\r\n/);
      assert.doesNotMatch(head, /secret-token|authorization/i);
    });
  } finally {
    runtime.close();
  }
});

Deno.test("a redirect from the runtime is relayed, never followed", async () => {
  const runtime = fakeRuntime(
    "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/steal\r\nContent-Length: 0\r\n\r\n",
  );
  try {
    await withApi(runtime.url, async (port, caPem) => {
      const { text, closed } = await upgrade(port, caPem);
      assert.match(text, /^HTTP\/1\.1 302 Found\r\n/);
      assert.ok(closed);
      assert.equal(runtime.heads.length, 1);
    });
  } finally {
    runtime.close();
  }
});

Deno.test("an unreachable streaming server is a 502 naming it", async () => {
  const port = freePort();
  await withApi(`http://127.0.0.1:${port}/exec/tok`, async (api, caPem) => {
    const { text, closed } = await upgrade(api, caPem);
    assert.match(text, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    assert.match(
      text,
      new RegExp(`streaming server at http://127\\.0\\.0\\.1:${port}`),
    );
    assert.ok(closed);
  });
});

Deno.test("an upgraded session outlives the request, header and idle time limits", async () => {
  const runtime = fakeRuntime(
    "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n",
  );
  try {
    await withApi(runtime.url, async (port, caPem) => {
      const conn = await Deno.connectTls({
        hostname: "127.0.0.1",
        port,
        caCerts: [caPem],
      });
      try {
        await conn.write(new TextEncoder().encode(
          "POST /exec/default/web/app?command=sh&output=1 HTTP/1.1\r\nHost: x\r\n" +
            "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n",
        ));
        const buf = new Uint8Array(4096);
        const n = await conn.read(buf);
        assert.match(
          new TextDecoder().decode(buf.subarray(0, n ?? 0)),
          /^HTTP\/1\.1 101 /,
        );
        // well past every limit of the listener, the session is still open
        await new Promise((r) => setTimeout(r, 2_500));
        await conn.write(new TextEncoder().encode("still here"));
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(runtime.after(), "still here");
      } finally {
        conn.close();
      }
    }, {
      requestTimeoutMs: 1_000,
      headersTimeoutMs: 1_000,
      idleTimeoutMs: 1_000,
    });
  } finally {
    runtime.close();
  }
});
