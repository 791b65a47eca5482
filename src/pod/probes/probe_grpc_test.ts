import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import {
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  HEALTH_CHECK_PATH,
} from "./probe_grpc.ts";
import { runProbe } from "./probe_handlers.ts";
import type { Container } from "../types.ts";

/** A HealthCheckResponse frame with the given status. */
function responseFrame(status: number): Uint8Array<ArrayBuffer> {
  const message = status ? [0x08, status] : [];
  return new Uint8Array([0, 0, 0, 0, message.length, ...message]);
}

const container: Container = { name: "app", image: "img" };

function target(podIP: string) {
  return {
    pod: {
      metadata: { name: "web", namespace: "default", uid: "u1" },
      spec: { containers: [container] },
    },
    status: { podIP },
    container,
    containerId: "c1",
  };
}

function deps(grpcFetch?: typeof fetch) {
  return {
    clock: new FakeClock(),
    signal: new AbortController().signal,
    runtime: { execSync: () => Promise.reject(new Error("unused")) },
    ...(grpcFetch ? { grpcFetch } : {}),
  };
}

Deno.test("encodeHealthCheckRequest() frames the service name as field 1", () => {
  assert.deepEqual(
    [...encodeHealthCheckRequest("db")],
    [0, 0, 0, 0, 4, 0x0a, 2, 0x64, 0x62],
  );
  assert.deepEqual([...encodeHealthCheckRequest("")], [0, 0, 0, 0, 0]);
});

Deno.test("decodeHealthCheckResponse() reads the status and rejects a missing frame", () => {
  assert.equal(decodeHealthCheckResponse(responseFrame(1)), 1);
  assert.equal(decodeHealthCheckResponse(responseFrame(0)), 0);
  assert.equal(
    decodeHealthCheckResponse(
      new Uint8Array([0, 0, 0, 0, 5, 0x12, 1, 0x78, 0x08, 2]),
    ),
    2,
    "unknown fields are skipped",
  );
  assert.throws(() => decodeHealthCheckResponse(new Uint8Array()), SyntaxError);
});

Deno.test("runProbe() grpc: SERVING succeeds, NOT_SERVING and Unimplemented fail", async () => {
  const seen: Request[] = [];
  let reply = () => new Response(responseFrame(1));
  const fake: typeof fetch = (input, init) => {
    seen.push(new Request(input, init));
    return Promise.resolve(reply());
  };
  const probe = { grpc: { port: 9000, service: "db" } };
  assert.equal(
    (await runProbe(probe, target("10.0.0.5"), deps(fake))).result,
    "success",
  );
  assert.equal(seen[0]!.url, `http://10.0.0.5:9000${HEALTH_CHECK_PATH}`);
  assert.equal(seen[0]!.method, "POST");
  assert.equal(seen[0]!.headers.get("content-type"), "application/grpc");
  assert.deepEqual(
    [...new Uint8Array(await seen[0]!.arrayBuffer())],
    [...encodeHealthCheckRequest("db")],
  );
  reply = () => new Response(responseFrame(2));
  const unhealthy = await runProbe(probe, target("10.0.0.5"), deps(fake));
  assert.deepEqual(unhealthy, {
    result: "failure",
    output: 'service unhealthy (responded with "NOT_SERVING")',
  });
  reply = () =>
    new Response(null, {
      headers: { "grpc-status": "12", "grpc-message": "unknown service" },
    });
  const unimplemented = await runProbe(probe, target("10.0.0.5"), deps(fake));
  assert.equal(unimplemented.result, "failure");
  assert.match(unimplemented.output, /does not implement the grpc health/);
});

Deno.test("runProbe() grpc talks h2c to a real server on the loopback", async () => {
  const paths: string[] = [];
  let status = 1;
  await using server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, async (request) => {
    paths.push(new URL(request.url).pathname);
    await request.arrayBuffer();
    return new Response(responseFrame(status), {
      headers: { "content-type": "application/grpc" },
    });
  });
  const probe = { grpc: { port: server.addr.port } };
  const ok = await runProbe(probe, target("127.0.0.1"), deps());
  assert.deepEqual(ok, { result: "success", output: "" });
  status = 3;
  const bad = await runProbe(probe, target("127.0.0.1"), deps());
  assert.equal(bad.result, "failure");
  assert.match(bad.output, /SERVICE_UNKNOWN/);
  assert.deepEqual(paths, [HEALTH_CHECK_PATH, HEALTH_CHECK_PATH]);
});

Deno.test("runProbe() grpc: a refused connection fails", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const outcome = await runProbe(
    { grpc: { port } },
    target("127.0.0.1"),
    deps(),
  );
  assert.equal(outcome.result, "failure");
});

Deno.test("runProbe() grpc: grpc-status 0 in the response headers is OK, not an error", async () => {
  // a server may put the OK status in the headers (HEADERS frame) rather than in trailers;
  // status 0 is OK, so the serving status in the body decides
  let frame = responseFrame(1);
  const fake: typeof fetch = () =>
    Promise.resolve(
      new Response(frame, {
        headers: { "content-type": "application/grpc", "grpc-status": "0" },
      }),
    );
  const probe = { grpc: { port: 9000 } };
  assert.deepEqual(await runProbe(probe, target("10.0.0.5"), deps(fake)), {
    result: "success",
    output: "",
  });
  frame = responseFrame(2);
  assert.deepEqual(await runProbe(probe, target("10.0.0.5"), deps(fake)), {
    result: "failure",
    output: 'service unhealthy (responded with "NOT_SERVING")',
  });
  // a true trailers-only answer carries no message: OK alone is not SERVING, so the probe
  // fails (grpc-go reports a unary call without a response message as an error)
  const empty: typeof fetch = () =>
    Promise.resolve(new Response(null, { headers: { "grpc-status": "0" } }));
  assert.equal(
    (await runProbe(probe, target("10.0.0.5"), deps(empty))).result,
    "failure",
  );
});
