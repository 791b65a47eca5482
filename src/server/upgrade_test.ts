import assert from "node:assert/strict";
import {
  isUpgradeRequest,
  parseResponseHead,
  upstreamRequestHead,
} from "./upgrade.ts";

Deno.test("an upgrade request has the Connection token and an Upgrade header", () => {
  const h = (init: Record<string, string>) => new Headers(init);
  assert.ok(
    isUpgradeRequest(h({ connection: "Upgrade", upgrade: "SPDY/3.1" })),
  );
  assert.ok(
    isUpgradeRequest(
      h({ connection: "keep-alive, upgrade", upgrade: "websocket" }),
    ),
  );
  assert.ok(!isUpgradeRequest(h({ connection: "Upgrade" })));
  assert.ok(!isUpgradeRequest(h({ upgrade: "websocket" })));
  assert.ok(!isUpgradeRequest(h({ connection: "upgrades", upgrade: "x" })));
});

Deno.test("the request to the streaming server: its path, its host, no credentials", () => {
  const head = upstreamRequestHead({
    method: "POST",
    rawHeaders: [
      "Host",
      "node:10250",
      "Authorization",
      "Bearer secret",
      "Connection",
      "Upgrade",
      "Upgrade",
      "SPDY/3.1",
      "X-Stream-Protocol-Version",
      "v4.channel.k8s.io",
      "X-Evil",
      "a\r\nInjected: yes",
    ],
    remoteAddress: "10.0.0.9",
  }, new URL("http://127.0.0.1:4444/exec/AbC"));
  assert.equal(
    head,
    "POST /exec/AbC HTTP/1.1\r\nHost: 127.0.0.1:4444\r\nConnection: Upgrade\r\n" +
      "Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n" +
      "X-Forwarded-For: 10.0.0.9\r\n\r\n",
  );
});

Deno.test("response heads: status and Content-Length", () => {
  assert.deepEqual(
    parseResponseHead("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n"),
    { status: 101 },
  );
  assert.deepEqual(
    parseResponseHead("HTTP/1.1 404 Not Found\r\nContent-Length: 12\r\n"),
    { status: 404, contentLength: 12 },
  );
  assert.equal(parseResponseHead("SSH-2.0-x\r\n"), undefined);
});
