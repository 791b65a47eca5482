import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { Pod } from "../types.ts";
import { createHttpSource } from "./http_source.ts";

const POD =
  `apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: busybox:1.36}]}\n`;

function fakeFetch(
  responses: (Response | Error)[],
  seen: Request[],
): typeof fetch {
  return (input, init) => {
    seen.push(new Request(input, init));
    const next = responses.shift();
    if (!next) return Promise.reject(new Error("no more responses"));
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  };
}

Deno.test("createHttpSource().refresh() fetches with the configured headers and defaults the pods", async () => {
  const seen: Request[] = [];
  const snapshots: Pod[][] = [];
  const source = createHttpSource(
    {
      clock: new FakeClock(),
      logger: new CaptureLogger(),
      fetch: fakeFetch([new Response(POD)], seen),
    },
    {
      url: "http://manifests.local/node",
      headers: { Authorization: ["Bearer x"], "X-Multi": ["a", "b"] },
      nodeName: "n1",
      checkFrequencyMs: 20_000,
      onSnapshot: (p) => snapshots.push(p),
    },
  );
  const pods = await source.refresh();
  assert.deepEqual(pods?.map((p) => p.metadata.name), ["web-n1"]);
  assert.equal(
    pods?.[0]?.metadata.annotations?.["kubernetes.io/config.source"],
    "http",
  );
  assert.equal(seen[0]!.headers.get("authorization"), "Bearer x");
  assert.equal(seen[0]!.headers.get("x-multi"), "a, b");
  assert.equal(snapshots.length, 1);
});

Deno.test("createHttpSource() keeps the previous pods when a fetch fails, and reports an empty body as no pods", async () => {
  const seen: Request[] = [];
  const logger = new CaptureLogger();
  const snapshots: Pod[][] = [];
  const source = createHttpSource(
    {
      clock: new FakeClock(),
      logger,
      fetch: fakeFetch([
        new Response("nope", { status: 500 }),
        new Error("connection refused"),
        new Response(""),
      ], seen),
    },
    {
      url: "http://m/x",
      nodeName: "n",
      checkFrequencyMs: 1000,
      onSnapshot: (p) => snapshots.push(p),
    },
  );
  assert.equal(await source.refresh(), undefined);
  assert.equal(await source.refresh(), undefined);
  assert.equal(snapshots.length, 0);
  const errors = logger.records.filter((r) => r.severity === "error").map((r) =>
    r.msg
  );
  assert.match(errors[0]!, /"http:\/\/m\/x": HTTP 500/);
  assert.match(errors[1]!, /connection refused/);
  assert.deepEqual(await source.refresh(), []);
  assert.deepEqual(snapshots, [[]]);
});

Deno.test("createHttpSource().run() polls every checkFrequency until aborted", async () => {
  const seen: Request[] = [];
  const clock = new FakeClock();
  const ac = new AbortController();
  const source = createHttpSource(
    {
      clock,
      logger: new CaptureLogger(),
      fetch: fakeFetch([
        new Response(POD),
        new Response(POD),
        new Response(POD),
      ], seen),
    },
    {
      url: "http://m/x",
      nodeName: "n",
      checkFrequencyMs: 20_000,
      onSnapshot: () => {},
    },
  );
  const running = source.run(ac.signal);
  await clock.advance(0);
  assert.equal(seen.length, 1);
  await clock.advance(20_000);
  assert.equal(seen.length, 2);
  ac.abort();
  await running;
});
