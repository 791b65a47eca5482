/**
 * A small gRPC server for unary methods on a unix socket, over `node:http2`
 * (Deno's `Deno.serve` cannot send HTTP trailers, and gRPC clients such as
 * grpc-go need `grpc-status` in trailers after a reply). Used for the
 * kubelet's device plugin `Registration` service; frames are the CRI
 * client's codec.
 *
 * @module
 */

import http2 from "node:http2";
import {
  create,
  type DescMessage,
  type DescMethodUnary,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import { encodeFrame, FrameDecoder, GrpcCode } from "../runtime/mod.ts";

/** A failure a handler reports to the caller as a gRPC status. */
export class GrpcStatusError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "GrpcStatusError";
    this.code = code;
  }
}

/** One unary method and what answers it. */
export interface UnaryRoute<I extends DescMessage, O extends DescMessage> {
  method: DescMethodUnary<I, O>;
  handle(request: MessageShape<I>): Promise<MessageInitShape<O>>;
}

/** One route, typed by its method. */
export function unaryRoute<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handle: (request: MessageShape<I>) => Promise<MessageInitShape<O>>,
): UnaryRoute<I, O> {
  return { method, handle };
}

/** A listening server; `close` stops it and removes nothing else. */
export interface GrpcUnixServer {
  readonly socketPath: string;
  close(): Promise<void>;
}

// deno-lint-ignore no-explicit-any
type AnyRoute = UnaryRoute<any, any>;

/** `/<package>.<Service>/<Method>`, the HTTP/2 path of a gRPC method. */
export function grpcPath(
  method: DescMethodUnary<DescMessage, DescMessage>,
): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/** Starts serving `routes` on the unix socket `socketPath` (which must not exist). */
export function serveGrpcUnix(
  socketPath: string,
  routes: AnyRoute[],
): Promise<GrpcUnixServer> {
  const table = new Map(routes.map((r) => [grpcPath(r.method), r]));
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    const path = String(headers[":path"] ?? "");
    const route = table.get(path);
    const chunks: Uint8Array[] = [];
    stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    stream.on("error", () => {});
    stream.on("end", () => {
      if (!route) {
        sendStatus(stream, GrpcCode.Unimplemented, `unknown method ${path}`);
        return;
      }
      void answer(stream, route, chunks);
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve({
        socketPath,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // open sessions would keep close() waiting forever
            for (const s of sessions) s.destroy();
          }),
      });
    });
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on("session", (s) => {
      sessions.add(s);
      s.on("close", () => sessions.delete(s));
    });
  });
}

async function answer(
  stream: http2.ServerHttp2Stream,
  route: AnyRoute,
  chunks: Uint8Array[],
): Promise<void> {
  let reply: Uint8Array;
  try {
    const decoder = new FrameDecoder();
    const messages = chunks.flatMap((c) => decoder.push(c));
    if (messages.length !== 1 || decoder.pendingBytes > 0) {
      throw new GrpcStatusError(
        GrpcCode.Internal,
        `expected one request message, got ${messages.length}`,
      );
    }
    const request = fromBinary(route.method.input, messages[0]!);
    const init = await route.handle(request);
    reply = encodeFrame(
      toBinary(route.method.output, create(route.method.output, init)),
    );
  } catch (error) {
    const code = error instanceof GrpcStatusError
      ? error.code
      : GrpcCode.Unknown;
    sendStatus(
      stream,
      code,
      error instanceof Error ? error.message : String(error),
    );
    return;
  }
  if (stream.destroyed) return;
  stream.respond(
    { ":status": 200, "content-type": "application/grpc" },
    { waitForTrailers: true },
  );
  stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  stream.end(reply);
}

/** A Trailers-Only answer: the status in the only headers. */
function sendStatus(
  stream: http2.ServerHttp2Stream,
  code: number,
  message: string,
): void {
  if (stream.destroyed) return;
  stream.respond({
    ":status": 200,
    "content-type": "application/grpc",
    "grpc-status": String(code),
    "grpc-message": encodeURIComponent(message),
  }, { endStream: true });
}
