import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import { grpcError, grpcReply, TestGrpcServer } from "./_grpc_test_server.ts";
import {
  checkVersion,
  connectRuntime,
  handshake,
  runtimeReadiness,
} from "./connect_runtime.ts";
import { createCriRuntime } from "./cri_client.ts";
import {
  GrpcCode,
  isNotFound,
  isUnimplemented,
  RuntimeError,
} from "./errors.ts";
import {
  ImageService as ImageServiceDesc,
  ImageStatusResponseSchema,
  ListContainersResponseSchema,
  RuntimeService as RuntimeServiceDesc,
  StatusResponseSchema,
  VersionResponseSchema,
} from "./gen/api_pb.ts";
import type { MessageInitShape } from "@bufbuild/protobuf";

const RT = "/runtime.v1.RuntimeService/";
const IMG = "/runtime.v1.ImageService/";

type StatusInit = MessageInitShape<typeof StatusResponseSchema>;

function readyStatus(networkReady = true): StatusInit {
  return {
    status: {
      conditions: [
        { type: "RuntimeReady", status: true },
        networkReady ? { type: "NetworkReady", status: true } : {
          type: "NetworkReady",
          status: false,
          reason: "NetworkPluginNotReady",
          message: "Network plugin returns error: cni plugin not initialized",
        },
      ],
    },
  };
}

function serveRuntime(
  server: TestGrpcServer,
  version: MessageInitShape<typeof VersionResponseSchema>,
  status: StatusInit,
): void {
  server.handlers.set(
    RT + "Version",
    () => grpcReply(VersionResponseSchema, version),
  );
  server.handlers.set(
    RT + "Status",
    () => grpcReply(StatusResponseSchema, status),
  );
}

const CONTAINERD = {
  version: "0.1.0",
  runtimeName: "containerd",
  runtimeVersion: "v1.6.39",
  runtimeApiVersion: "v1",
};

Deno.test("createCriRuntime routes each method to its RPC path", async () => {
  await using server = await TestGrpcServer.create();
  server.handlers.set(
    RT + "ListContainers",
    () =>
      grpcReply(ListContainersResponseSchema, {
        containers: [{ id: "c1", labels: { app: "web" } }],
      }),
  );
  server.handlers.set(
    IMG + "ImageStatus",
    () => grpcReply(ImageStatusResponseSchema, {}),
  );
  server.handlers.set(
    RT + "ContainerStatus",
    () =>
      grpcError(5, "an error occurred when try to find container: not found"),
  );
  server.start();
  await using runtime = createCriRuntime({ endpoint: server.endpoint });
  const list = await runtime.listContainers({
    filter: { labelSelector: { "io.kubernetes.pod.uid": "u1" } },
  });
  assert.deepEqual(list.containers.map((c) => [c.id, c.labels]), [[
    "c1",
    { app: "web" },
  ]]);
  const image = await runtime.imageStatus({ image: { image: "busybox" } });
  assert.equal(image.image, undefined, "absent image is an empty answer");
  const failure = await runtime.containerStatus({ containerId: "nope" }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isNotFound(failure));
  assert.deepEqual(server.calls.map((c) => c.path), [
    RT + "ListContainers",
    IMG + "ImageStatus",
    RT + "ContainerStatus",
  ]);
});

Deno.test("createCriRuntime() has one method per RPC of both CRI services", async () => {
  await using server = await TestGrpcServer.create();
  server.start();
  await using runtime = createCriRuntime({ endpoint: server.endpoint });
  const client = runtime as unknown as Record<
    string,
    (request: object) => Promise<unknown> | AsyncIterable<unknown>
  >;
  const rpcs = [...RuntimeServiceDesc.methods, ...ImageServiceDesc.methods];
  assert.equal(rpcs.length, 35);
  for (const rpc of rpcs) {
    const call = client[rpc.localName]!({});
    // the test server answers every RPC it has no handler for Unimplemented
    const outcome = Symbol.asyncIterator in call
      ? (async () => {
        for await (const _ of call) break;
      })()
      : call;
    await assert.rejects(outcome, (e: unknown) => isUnimplemented(e));
  }
  assert.deepEqual(
    server.calls.map((c) => c.path),
    rpcs.map((rpc) => `/${rpc.parent.typeName}/${rpc.name}`),
  );
});

Deno.test("a separate image endpoint receives only image calls", async () => {
  await using runtimeServer = await TestGrpcServer.create();
  await using imageServer = await TestGrpcServer.create();
  serveRuntime(runtimeServer, CONTAINERD, readyStatus());
  imageServer.handlers.set(
    IMG + "ImageStatus",
    () => grpcReply(ImageStatusResponseSchema, { image: { id: "sha256:1" } }),
  );
  runtimeServer.start();
  imageServer.start();
  await using runtime = createCriRuntime({
    endpoint: runtimeServer.endpoint,
    imageEndpoint: `unix:${imageServer.socketPath}`,
  });
  assert.equal((await runtime.version({})).runtimeName, "containerd");
  const status = await runtime.imageStatus({ image: { image: "pause" } });
  assert.equal(status.image?.id, "sha256:1");
  assert.deepEqual(runtimeServer.calls.map((c) => c.path), [RT + "Version"]);
  assert.deepEqual(imageServer.calls.map((c) => c.path), [IMG + "ImageStatus"]);
});

Deno.test("bad endpoints name the right flag", () => {
  assert.throws(
    () => createCriRuntime({ endpoint: "tcp://1.2.3.4:5" }),
    /Invalid --container-runtime-endpoint "tcp:\/\/1\.2\.3\.4:5"/,
  );
  assert.throws(
    () =>
      createCriRuntime({
        endpoint: "/run/containerd/containerd.sock",
        imageEndpoint: "npipe://x",
      }),
    /Invalid --image-service-endpoint "npipe:\/\/x"/,
  );
});

Deno.test("connectRuntime succeeds against a v1 runtime and reports network", async () => {
  await using server = await TestGrpcServer.create();
  serveRuntime(server, CONTAINERD, readyStatus(false));
  server.start();
  const connected = await connectRuntime({ endpoint: server.endpoint });
  await using _runtime = connected.runtime;
  assert.equal(connected.version.runtimeVersion, "v1.6.39");
  assert.equal(connected.readiness.runtimeReady, true);
  assert.equal(connected.readiness.networkReady, false);
  assert.deepEqual(connected.readiness.problems, [
    "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
  ]);
  const sent = server.calls[0]!;
  assert.equal(sent.path, RT + "Version");
});

Deno.test("connectRuntime rejects a runtime without CRI v1", async () => {
  await using server = await TestGrpcServer.create();
  server.start(); // no handlers: every RPC is Unimplemented
  await assert.rejects(
    connectRuntime({ endpoint: server.endpoint }),
    (e: unknown) => {
      assert.ok(e instanceof RuntimeError);
      assert.equal(e.code, GrpcCode.Unimplemented);
      assert.match(
        e.message,
        /validate CRI v1 runtime API for endpoint "unix:\/\/.*": the runtime does not serve runtime\.v1\.RuntimeService/,
      );
      return true;
    },
  );
});

Deno.test("checkVersion and readiness produce upstream-like errors", () => {
  assert.throws(
    () =>
      checkVersion(
        { ...CONTAINERD, runtimeApiVersion: "v1alpha2" } as never,
        "unix:///x",
      ),
    /reports API version "v1alpha2", expected "v1"/,
  );
  assert.throws(
    () =>
      checkVersion({ ...CONTAINERD, version: "0.2.0" } as never, "unix:///x"),
    /kubelet runtime API "0.2.0", expected "0.1.0"/,
  );
  const down = runtimeReadiness({
    status: {
      conditions: [{
        type: "RuntimeReady",
        status: false,
        reason: "Boom",
        message: "broken",
      }],
    },
  } as never);
  assert.equal(down.runtimeReady, false);
  assert.deepEqual(down.problems, [
    "container runtime not ready: RuntimeReady=false reason:Boom message:broken",
    "container runtime network not ready: NetworkReady missing",
  ]);
});

Deno.test("handshake waits for RuntimeReady within waitMs on the injected clock", async () => {
  await using server = await TestGrpcServer.create();
  let statusCalls = 0;
  server.handlers.set(
    RT + "Version",
    () => grpcReply(VersionResponseSchema, CONTAINERD),
  );
  server.handlers.set(RT + "Status", () => {
    statusCalls++;
    return grpcReply(
      StatusResponseSchema,
      statusCalls < 3
        ? { status: { conditions: [{ type: "RuntimeReady", status: false }] } }
        : readyStatus(),
    );
  });
  server.start();
  await using runtime = createCriRuntime({ endpoint: server.endpoint });
  const clock = new FakeClock();
  const done = handshake(runtime, {
    clock,
    waitMs: 10_000,
    retryIntervalMs: 1000,
  });
  while (statusCalls < 3) {
    await new Promise((r) => setTimeout(r, 1));
    if (clock.pendingSleeps > 0) await clock.advance(1000);
  }
  const result = await done;
  assert.equal(result.readiness.runtimeReady, true);
  assert.equal(statusCalls, 3);

  // and gives up once the wait budget is spent
  statusCalls = -100;
  const failing = handshake(runtime, {
    clock,
    waitMs: 1500,
    retryIntervalMs: 1000,
  });
  const outcome = failing.then(
    () => "resolved",
    (e: RuntimeError) => e.grpcMessage,
  );
  while (clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 1));
  await clock.advance(1000);
  assert.match(
    await outcome,
    /^container runtime not ready: RuntimeReady=false/,
  );
});
