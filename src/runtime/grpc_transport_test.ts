import assert from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Logger, VerboseLogger } from "../log/mod.ts";
import { grpcError, grpcReply, TestGrpcServer } from "./_grpc_test_server.ts";
import {
  CanceledError,
  DeadlineExceededError,
  GrpcCode,
  NotFoundError,
  RuntimeError,
  RuntimeUnavailableError,
  UnimplementedError,
} from "./errors.ts";
import {
  ContainerEventResponseSchema,
  ContainerEventType,
  ExecSyncResponseSchema,
  ListContainersResponseSchema,
  PodSandboxStatusRequestSchema,
  PodSandboxStatusResponseSchema,
  RuntimeService,
  VersionRequestSchema,
  VersionResponseSchema,
} from "./gen/api_pb.ts";
import { encodeFrame } from "./grpc_codec.ts";
import { createGrpcTransport, criNetPermissions } from "./grpc_transport.ts";

const M = RuntimeService.method;
const VERSION = "/runtime.v1.RuntimeService/Version";
const SANDBOX_STATUS = "/runtime.v1.RuntimeService/PodSandboxStatus";

Deno.test("unary call round-trips request and response over HTTP/2", async () => {
  await using server = await TestGrpcServer.create();
  server.handlers.set(SANDBOX_STATUS, ({ messages }) => {
    const request = fromBinary(PodSandboxStatusRequestSchema, messages[0]!);
    return grpcReply(PodSandboxStatusResponseSchema, {
      status: {
        id: request.podSandboxId,
        createdAt: 1_700_000_000_000_000_123n,
      },
      info: { verbose: String(request.verbose) },
    });
  });
  server.start();
  await using transport = createGrpcTransport({ endpoint: server.endpoint });
  const response = await transport.unary(M.podSandboxStatus, {
    podSandboxId: "abc",
    verbose: true,
  });
  assert.equal(response.status?.id, "abc");
  assert.equal(response.status?.createdAt, 1_700_000_000_000_000_123n);
  assert.deepEqual(response.info, { verbose: "true" });
  const call = server.calls[0]!;
  assert.equal(call.headers.get("content-type"), "application/grpc");
  assert.equal(call.headers.get("te"), "trailers");
  assert.equal(call.headers.get("grpc-timeout"), "120000m");
});

Deno.test("grpc-status in headers maps to typed errors with decoded message", async () => {
  await using server = await TestGrpcServer.create();
  server.handlers.set(
    SANDBOX_STATUS,
    () => grpcError(5, 'sandbox "x" not found: é'),
  );
  server.handlers.set(VERSION, () => grpcError(9, "precondition"));
  server.start();
  await using transport = createGrpcTransport({ endpoint: server.endpoint });
  await assert.rejects(
    transport.unary(M.podSandboxStatus, { podSandboxId: "x" }),
    (e: unknown) => {
      assert.ok(e instanceof NotFoundError);
      assert.equal(e.grpcMessage, 'sandbox "x" not found: é');
      assert.equal(e.method, SANDBOX_STATUS);
      return true;
    },
  );
  await assert.rejects(
    transport.unary(M.version, {}),
    (e: unknown) =>
      e instanceof RuntimeError && e.code === GrpcCode.FailedPrecondition,
  );
  // no handler: the test server answers Unimplemented like grpc-go
  await assert.rejects(
    transport.unary(M.status, {}),
    UnimplementedError,
  );
});

Deno.test("malformed responses are errors, not empty messages", async () => {
  await using server = await TestGrpcServer.create();
  let mode = "";
  server.handlers.set(VERSION, () => {
    switch (mode) {
      case "empty":
        return new Response(null, {
          headers: { "content-type": "application/grpc" },
        });
      case "html":
        return new Response("<html>", {
          headers: { "content-type": "text/html" },
        });
      case "503":
        return new Response("busy", { status: 503 });
      case "two": {
        const one = encodeFrame(new Uint8Array());
        return new Response(new Uint8Array([...one, ...one]), {
          headers: { "content-type": "application/grpc" },
        });
      }
      default: // truncated frame
        return new Response(new Uint8Array([0, 0, 0, 0, 9, 1]), {
          headers: { "content-type": "application/grpc" },
        });
    }
  });
  server.start();
  await using transport = createGrpcTransport({ endpoint: server.endpoint });
  const expectations: Array<[string, number, RegExp]> = [
    ["empty", GrpcCode.Unknown, /no message and no grpc-status/],
    ["html", GrpcCode.Unknown, /content-type "text\/html"/],
    ["503", GrpcCode.Unavailable, /HTTP status 503/],
    ["two", GrpcCode.Internal, /2 message/],
    ["truncated", GrpcCode.Internal, /stray byte/],
  ];
  for (const [name, code, text] of expectations) {
    mode = name;
    await assert.rejects(transport.unary(M.version, {}), (e: unknown) => {
      assert.ok(e instanceof RuntimeError, name);
      assert.equal(e.code, code, name);
      assert.match(e.grpcMessage, text);
      return true;
    });
  }
});

Deno.test("deadline: grpc-timeout is sent and expiry gives DeadlineExceeded", async () => {
  await using server = await TestGrpcServer.create();
  let release!: (r: Response) => void;
  const held = new Promise<Response>((resolve) => release = resolve);
  // never answers on its own; released after the client has given up
  server.handlers.set(VERSION, () => held);
  server.start();
  await using transport = createGrpcTransport({
    endpoint: server.endpoint,
    timeoutMs: 30_000,
  });
  await assert.rejects(
    transport.unary(M.version, {}, { timeoutMs: 50 }),
    (e: unknown) => {
      assert.ok(e instanceof DeadlineExceededError);
      assert.match(e.grpcMessage, /context deadline exceeded/);
      return true;
    },
  );
  assert.equal(server.calls[0]!.headers.get("grpc-timeout"), "50000000n");
  release(new Response(null));
});

Deno.test("deadline: one hanging call expires while others on the transport go on", async () => {
  await using server = await TestGrpcServer.create();
  const releases: Array<(r: Response) => void> = [];
  server.handlers.set(
    VERSION,
    () => new Promise<Response>((resolve) => releases.push(resolve)),
  );
  server.handlers.set(
    SANDBOX_STATUS,
    ({ messages }) =>
      grpcReply(PodSandboxStatusResponseSchema, {
        status: {
          id: fromBinary(PodSandboxStatusRequestSchema, messages[0]!)
            .podSandboxId,
        },
      }),
  );
  server.start();
  await using transport = createGrpcTransport({ endpoint: server.endpoint });
  const start = performance.now();
  // a long-deadline call first, so the short one must re-arm the shared timer
  const slow = transport.unary(M.version, {}, { timeoutMs: 60_000 });
  const hanging = transport.unary(M.version, {}, { timeoutMs: 80 });
  const quick = await transport.unary(M.podSandboxStatus, {
    podSandboxId: "q",
  });
  assert.equal(quick.status?.id, "q");
  await assert.rejects(hanging, DeadlineExceededError);
  const elapsed = performance.now() - start;
  assert.ok(elapsed >= 79 && elapsed < 10_000, `expired after ${elapsed} ms`);
  // the other hanging call is still waiting for its own (later) deadline
  const late = await Promise.race([
    slow.then(() => "answered", () => "failed"),
    new Promise((r) => setTimeout(() => r("pending"), 50)),
  ]);
  assert.equal(late, "pending");
  for (const release of releases) {
    release(grpcReply(VersionResponseSchema, { runtimeName: "x" }));
  }
  assert.equal((await slow).runtimeName, "x");
});

Deno.test("server stream with timeoutMs ends with DeadlineExceeded", async () => {
  await using server = await TestGrpcServer.create();
  let stop!: () => void;
  const stopped = new Promise<void>((r) => stop = r);
  server.handlers.set("/runtime.v1.RuntimeService/GetContainerEvents", () => {
    const first = encodeFrame(
      toBinary(
        ContainerEventResponseSchema,
        create(ContainerEventResponseSchema, { containerId: "a" }),
      ),
    );
    // one event, then silence until the client gives up
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(first);
        stopped.then(() => controller.close());
      },
    });
    return new Response(body, {
      headers: { "content-type": "application/grpc" },
    });
  });
  server.start();
  await using transport = createGrpcTransport({ endpoint: server.endpoint });
  const seen: string[] = [];
  await assert.rejects(
    (async () => {
      for await (
        const event of transport.serverStream(M.getContainerEvents, {}, {
          timeoutMs: 100,
        })
      ) seen.push(event.containerId);
    })(),
    DeadlineExceededError,
  );
  assert.deepEqual(seen, ["a"]);
  assert.equal(server.calls[0]!.headers.get("grpc-timeout"), "100000u");
  stop();
});

Deno.test("a response larger than maxMessageBytes is ResourceExhausted", async () => {
  await using server = await TestGrpcServer.create();
  server.handlers.set(
    VERSION,
    () => grpcReply(VersionResponseSchema, { runtimeName: "x".repeat(64) }),
  );
  server.start();
  await using transport = createGrpcTransport({
    endpoint: server.endpoint,
    maxMessageBytes: 32,
  });
  await assert.rejects(transport.unary(M.version, {}), (e: unknown) => {
    assert.ok(e instanceof RuntimeError);
    assert.equal(e.code, GrpcCode.ResourceExhausted);
    assert.match(e.grpcMessage, /larger than max \(66 vs\. 32\)/);
    return true;
  });
  await using roomy = createGrpcTransport({
    endpoint: server.endpoint,
    maxMessageBytes: 66,
  });
  assert.equal((await roomy.unary(M.version, {})).runtimeName.length, 64);
});

Deno.test("caller abort gives CanceledError; close() cancels in-flight calls", async () => {
  await using server = await TestGrpcServer.create();
  let arrived!: () => void;
  let seen = new Promise<void>((r) => arrived = r);
  const releases: Array<(r: Response) => void> = [];
  server.handlers.set(VERSION, () =>
    new Promise<Response>((resolve) => {
      releases.push(resolve);
      arrived();
    }));
  server.start();
  const transport = createGrpcTransport({ endpoint: server.endpoint });
  const controller = new AbortController();
  const pending = transport.unary(M.version, {}, { signal: controller.signal });
  await seen;
  controller.abort(new Error("pod deleted"));
  await assert.rejects(pending, (e: unknown) => {
    assert.ok(e instanceof CanceledError);
    assert.equal((e.cause as Error).message, "pod deleted");
    return true;
  });

  seen = new Promise<void>((r) => arrived = r);
  const second = transport.unary(M.version, {});
  await seen;
  await transport.close();
  await assert.rejects(second, /the CRI client was closed/);
  await assert.rejects(transport.unary(M.version, {}), CanceledError);
  for (const release of releases) release(new Response(null));
});

Deno.test("missing socket is Unavailable; the same client works once it appears", async () => {
  await using server = await TestGrpcServer.create();
  server.handlers.set(
    VERSION,
    () => grpcReply(VersionResponseSchema, { runtimeApiVersion: "v1" }),
  );
  await using transport = createGrpcTransport({
    endpoint: server.socketPath,
    connectRetryDelaysMs: [],
  });
  await assert.rejects(transport.unary(M.version, {}), (e: unknown) => {
    assert.ok(e instanceof RuntimeUnavailableError);
    assert.match(e.grpcMessage, /cannot reach the container runtime at "/);
    assert.match(e.grpcMessage, /No such file or directory/);
    return true;
  });
  server.start();
  const ok = await transport.unary(M.version, {});
  assert.equal(ok.runtimeApiVersion, "v1");
  // the runtime restarts: stop, then serve again on the same path
  await server.stop();
  await assert.rejects(transport.unary(M.version, {}), RuntimeUnavailableError);
  server.start();
  assert.equal((await transport.unary(M.version, {})).runtimeApiVersion, "v1");
});

/** Logger whose v(4).info runs a hook: lets a test act between retries. */
function hookLogger(onVerbose: (msg: string) => void): Logger {
  const verbose: VerboseLogger = {
    enabled: true,
    info: (msg) => onVerbose(msg),
  };
  const logger: Logger = {
    info() {},
    warn() {},
    error() {},
    v: () => verbose,
    with: () => logger,
  };
  return logger;
}

Deno.test("connect errors are retried, so a socket appearing late is picked up", async () => {
  await using server = await TestGrpcServer.create();
  // echoes the request: a retry must re-send the caller's message intact
  server.handlers.set(VERSION, ({ messages }) => {
    const request = fromBinary(VersionRequestSchema, messages[0]!);
    return grpcReply(VersionResponseSchema, {
      runtimeName: `late ${request.version}`,
    });
  });
  const retries: string[] = [];
  await using transport = createGrpcTransport({
    endpoint: `unix:${server.socketPath}`,
    connectRetryDelaysMs: [10, 10, 10],
    logger: hookLogger((msg) => {
      retries.push(msg);
      if (retries.length === 2) server.start();
    }),
  });
  const response = await transport.unary(M.version, { version: "v9" });
  assert.equal(response.runtimeName, "late v9");
  assert.deepEqual(retries, [
    "Retrying CRI call after connect error",
    "Retrying CRI call after connect error",
  ]);
});

Deno.test("server streaming yields every message in order", async () => {
  await using server = await TestGrpcServer.create();
  server.handlers.set("/runtime.v1.RuntimeService/GetContainerEvents", () => {
    const frames = ["a", "b", "c"].map((containerId, containerEventType) =>
      encodeFrame(
        toBinary(
          ContainerEventResponseSchema,
          create(ContainerEventResponseSchema, {
            containerId,
            containerEventType,
          }),
        ),
      )
    );
    // send frames in uneven chunks to exercise reassembly
    const all = new Uint8Array(frames.flatMap((f) => [...f]));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(all.slice(0, 3));
        controller.enqueue(all.slice(3, 20));
        controller.enqueue(all.slice(20));
        controller.close();
      },
    });
    return new Response(body, {
      headers: { "content-type": "application/grpc" },
    });
  });
  server.start();
  await using transport = createGrpcTransport({ endpoint: server.endpoint });
  const events = [];
  for await (const event of transport.serverStream(M.getContainerEvents, {})) {
    events.push([event.containerId, event.containerEventType]);
  }
  assert.deepEqual(events, [
    ["a", ContainerEventType.CONTAINER_CREATED_EVENT],
    ["b", ContainerEventType.CONTAINER_STARTED_EVENT],
    ["c", ContainerEventType.CONTAINER_STOPPED_EVENT],
  ]);
  assert.equal(server.calls[0]!.headers.get("grpc-timeout"), null);
});

Deno.test("invalid endpoint and timeout fail fast with flag names", () => {
  assert.throws(
    () => createGrpcTransport({ endpoint: "tcp://localhost:1" }),
    /--container-runtime-endpoint/,
  );
  assert.throws(
    () => createGrpcTransport({ endpoint: "/x.sock", timeoutMs: 0 }),
    /--runtime-request-timeout/,
  );
});

Deno.test("concurrent calls share one HTTP/2 connection and keep their answers apart", async () => {
  await using server = await TestGrpcServer.create();
  server.handlers.set(SANDBOX_STATUS, async ({ messages }) => {
    const request = fromBinary(PodSandboxStatusRequestSchema, messages[0]!);
    // answer out of order: later IDs first
    await new Promise((r) => setTimeout(r, 50 - Number(request.podSandboxId)));
    return grpcReply(PodSandboxStatusResponseSchema, {
      status: { id: request.podSandboxId },
    });
  });
  server.start();
  await using transport = createGrpcTransport({ endpoint: server.endpoint });
  const ids = Array.from({ length: 40 }, (_, i) => String(i));
  const answers = await Promise.all(
    ids.map((podSandboxId) =>
      transport.unary(M.podSandboxStatus, { podSandboxId })
    ),
  );
  assert.deepEqual(answers.map((a) => a.status?.id), ids);
});

Deno.test("missing Deno permission becomes PermissionDenied naming the grant", async () => {
  const here = (name: string) => new URL(name, import.meta.url).href;
  const script = `
    import { createGrpcTransport } from "${here("./grpc_transport.ts")}";
    import { RuntimeService } from "${here("./gen/api_pb.ts")}";
    try {
      const t = createGrpcTransport({ endpoint: "unix:///tmp/kts-no-such.sock" });
      await t.unary(RuntimeService.method.version, {});
    } catch (e) {
      Deno.stdout.writeSync(new TextEncoder().encode(e.message));
    }`;
  // no --allow-net and no access to the socket path: the CRI client must say what to grant
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      `--allow-read=${new URL("../..", import.meta.url).pathname}`,
      "-",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  const { stdout, stderr } = await child.output();
  const text = new TextDecoder().decode(stdout);
  assert.match(text, /PermissionDenied/, new TextDecoder().decode(stderr));
  assert.match(
    text,
    /--allow-net=unix:\/tmp\/kts-no-such\.sock,cri\.invalid:80/,
  );
});

Deno.test("criNetPermissions lists the unix socket and the URL host", () => {
  assert.deepEqual(
    criNetPermissions("unix:///run/containerd/containerd.sock"),
    [
      "unix:/run/containerd/containerd.sock",
      "cri.invalid:80",
    ],
  );
  assert.throws(
    () => criNetPermissions("tcp://x:1", { flag: "--image-service-endpoint" }),
    /--image-service-endpoint/,
  );
});

Deno.test("large answers decoded one after another each keep their own contents", async () => {
  await using server = await TestGrpcServer.create();
  // answers over the size that goes through the transport's kept buffer
  const answer = (tag: string) =>
    Array.from({ length: 600 }, (_, i) => ({
      id: `${tag}-${i}`.padEnd(120, tag),
      labels: { tag },
    }));
  // a field this client does not know (a newer runtime's), 1 KiB, other bytes each call
  const unknownField = (fill: number) =>
    new Uint8Array([
      0x9a,
      0x06,
      0x80,
      0x08,
      ...new Uint8Array(1024).fill(fill),
    ]);
  let n = 0;
  server.handlers.set("/runtime.v1.RuntimeService/ListContainers", () => {
    const tag = n++ % 2 ? "b" : "a";
    const known = toBinary(
      ListContainersResponseSchema,
      create(ListContainersResponseSchema, { containers: answer(tag) }),
    );
    return new Response(
      encodeFrame(new Uint8Array([...known, ...unknownField(n)])),
      {
        headers: { "content-type": "application/grpc" },
      },
    );
  });
  const output = new Uint8Array(100_000).map((_, i) => i % 251);
  server.handlers.set(
    "/runtime.v1.RuntimeService/ExecSync",
    () => grpcReply(ExecSyncResponseSchema, { stdout: output }),
  );
  server.start();
  await using transport = createGrpcTransport({ endpoint: server.endpoint });
  const first = await transport.unary(M.listContainers, {});
  const firstCopy = structuredClone(first);
  const exec = await transport.unary(M.execSync, { containerId: "c" });
  const execCopy = structuredClone(exec);
  const second = await transport.unary(M.listContainers, {});
  await transport.unary(M.listContainers, {});
  await transport.unary(M.listContainers, {});
  assert.deepEqual(
    first.containers.map((c) => [c.id, c.labels]),
    answer("a").map((c) => [c.id, c.labels]),
  );
  assert.deepEqual(
    second.containers.map((c) => c.id),
    answer("b").map((c) => c.id),
  );
  // compared without assert's diff, which takes minutes for arrays this long
  const same = (a: Uint8Array, b: Uint8Array) =>
    a.length === b.length && a.every((x, i) => x === b[i]);
  assert.ok(same(exec.stdout, output), "ExecSync stdout changed");
  // nothing of an answer changes under later calls: not its bytes fields, not what it
  // kept of fields it does not know
  assert.deepEqual(first, firstCopy);
  assert.ok(same(exec.stdout, execCopy.stdout), "ExecSync stdout changed");
});
