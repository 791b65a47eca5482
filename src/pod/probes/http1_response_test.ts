import assert from "node:assert/strict";
import { decodeHttp1Response, MAX_HEAD_BYTES } from "./http1_response.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("decodeHttp1Response() waits for the head, then a Content-Length body", () => {
  const full =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello";
  assert.equal(
    decodeHttp1Response(bytes(full.slice(0, 20)), false, 100),
    undefined,
  );
  assert.equal(
    decodeHttp1Response(bytes(full.slice(0, -2)), false, 100),
    undefined,
  );
  const r = decodeHttp1Response(bytes(full), false, 100)!;
  assert.equal(r.status, 503);
  assert.equal(r.statusText, "Service Unavailable");
  assert.deepEqual(r.headers, [["Content-Length", "5"], ["X-A", "b"]]);
  assert.equal(text(r.body), "hello");
});

Deno.test("decodeHttp1Response() stops at the body limit and reads a length-less body to the close", () => {
  const long = `HTTP/1.1 500 x\r\nContent-Length: 1000\r\n\r\n${
    "a".repeat(10)
  }`;
  assert.equal(
    text(decodeHttp1Response(bytes(long), false, 10)!.body),
    "a".repeat(10),
  );
  const open = "HTTP/1.0 200 OK\r\n\r\npart";
  assert.equal(decodeHttp1Response(bytes(open), false, 100), undefined);
  assert.equal(text(decodeHttp1Response(bytes(open), true, 100)!.body), "part");
});

Deno.test("decodeHttp1Response() decodes a chunked body, up to the limit", () => {
  const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\n\r\n";
  assert.equal(
    decodeHttp1Response(bytes(chunked.slice(0, -12)), false, 100),
    undefined,
  );
  assert.equal(
    text(decodeHttp1Response(bytes(chunked), false, 100)!.body),
    "abcdefg",
  );
  assert.equal(
    text(decodeHttp1Response(bytes(chunked), false, 5)!.body),
    "abcde",
  );
  assert.throws(
    () =>
      decodeHttp1Response(
        bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        false,
        100,
      ),
    /malformed chunk size "zz"/,
  );
});

Deno.test("decodeHttp1Response() skips interim responses; 204 has no body", () => {
  const r = decodeHttp1Response(
    bytes(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nA: 1\r\n\r\n",
    ),
    false,
    100,
  )!;
  assert.equal(r.status, 204);
  assert.equal(r.body.length, 0);
});

Deno.test("decodeHttp1Response() rejects a malformed or huge head and an early close", () => {
  assert.throws(
    () => decodeHttp1Response(bytes("SSH-2.0-OpenSSH\r\n\r\n"), false, 1),
    /status line "SSH-2.0-OpenSSH"/,
  );
  assert.throws(
    () =>
      decodeHttp1Response(
        bytes("HTTP/1.1 200 OK\r\nnocolon\r\n\r\n"),
        false,
        1,
      ),
    /header line "nocolon"/,
  );
  assert.throws(
    () => decodeHttp1Response(new Uint8Array(MAX_HEAD_BYTES + 1), false, 1),
    /larger than 64 KiB/,
  );
  assert.throws(
    () => decodeHttp1Response(bytes("HTTP/1.1 200"), true, 1),
    /closed before the HTTP response/,
  );
});
