import assert from "node:assert/strict";
import { createServer } from "node:http";
import { fixedBody, fixedResponse } from "./fixed_body.ts";
import { writeResponse } from "./node_bridge.ts";

const short = new TextEncoder().encode("ok");
const long = new Uint8Array(100_000).fill(97);

Deno.test("fixedResponse() reads as an ordinary response, short or long", async () => {
  for (const body of [short, long]) {
    const response = fixedResponse(201, body, {
      "content-type": "text/plain",
      "x-content-type-options": "nosniff",
    });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("content-type"), "text/plain");
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    assert.equal(fixedBody(response), body);
    assert.deepEqual(await response.bytes(), body);
  }
  assert.equal(fixedBody(new Response("ok")), undefined);
});

Deno.test("writeResponse() sends a short fixed body with its length and a long one chunked, as Go", async () => {
  let next = short;
  const server = createServer((_req, res) => {
    void writeResponse(fixedResponse(200, next, {}), res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  try {
    const first = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(first.headers.get("content-length"), "2");
    assert.equal(await first.text(), "ok");
    next = long;
    const second = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(second.headers.get("content-length"), null);
    assert.equal(second.headers.get("transfer-encoding"), "chunked");
    assert.equal((await second.bytes()).length, long.length);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
