import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { toRequest } from "./node_bridge.ts";

const ORIGIN = "https://127.0.0.1:10250";

function incoming(
  url: string,
  headers: Record<string, string | string[]> = {},
): IncomingMessage {
  return { url, method: "GET", headers } as unknown as IncomingMessage;
}

/** What the URL of a target is when parsed against the origin, as a handler then reads it. */
function resolved(target: string): string {
  try {
    return new URL(target, ORIGIN).href;
  } catch {
    return `${ORIGIN}/`;
  }
}

Deno.test("toRequest gives every target the URL that parsing it below the origin gives", () => {
  const tricky = [
    "/healthz",
    "/pods?x=1#f",
    "/a/../b",
    "/%2e%2e/etc",
    "//evil.example/x",
    "/\\evil.example/x",
    "/\t/evil.example",
    "/x\n/y",
    "http://evil.example/x",
    "*",
    "",
  ];
  for (const target of tricky) {
    const url = toRequest(incoming(target), ORIGIN).url;
    assert.equal(new URL(url).href, resolved(target), JSON.stringify(target));
  }
  // random targets over the characters URL parsing treats specially
  const alphabet = [
    "/",
    "\\",
    "\t",
    "\n",
    "\r",
    " ",
    ".",
    "%2e",
    "?",
    "#",
    "@",
    ":",
    "a",
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < 5000; i++) {
    let target = "/";
    const length = next() % 8;
    for (let j = 0; j < length; j++) {
      target += alphabet[next() % alphabet.length];
    }
    const url = toRequest(incoming(target), ORIGIN).url;
    assert.equal(new URL(url).href, resolved(target), JSON.stringify(target));
  }
});

Deno.test("toRequest reads headers by name in any case, repeated values joined", () => {
  const request = toRequest(
    incoming("/", {
      authorization: "Bearer t",
      "x-many": ["a", "b"],
    }),
    ORIGIN,
  );
  assert.equal(request.headers.get("Authorization"), "Bearer t");
  assert.equal(request.headers.get("x-many"), "a, b");
  assert.equal(request.headers.get("upgrade"), null);
  assert.equal(request.method, "GET");
});
