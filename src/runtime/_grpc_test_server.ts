/**
 * In-process gRPC test server for the transport tests: `Deno.serve` on a unix
 * socket speaks h2c with prior knowledge, which is what our client sends.
 * `Response` cannot carry trailers, so handlers put `grpc-status` in headers
 * (like a Trailers-Only answer) or omit it on success.
 *
 * @module
 */

import {
  create,
  type DescMessage,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import { encodeFrame, FrameDecoder } from "./grpc_codec.ts";

/** What a handler sees of one call. */
export interface TestCall {
  path: string;
  headers: Headers;
  /** Decoded request frames (normally exactly one). */
  messages: Uint8Array[];
}

export type TestHandler = (call: TestCall) => Response | Promise<Response>;

/** A gRPC-ish server on a temporary unix socket. */
export class TestGrpcServer implements AsyncDisposable {
  readonly socketPath: string;
  readonly calls: TestCall[] = [];
  readonly handlers = new Map<string, TestHandler>();
  #server: Deno.HttpServer<Deno.UnixAddr> | undefined;
  #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
    this.socketPath = `${dir}/grpc.sock`;
  }

  /** Creates the server without listening; call {@link start}. */
  static async create(): Promise<TestGrpcServer> {
    return new TestGrpcServer(await Deno.makeTempDir({ prefix: "kts-grpc-" }));
  }

  get endpoint(): string {
    return `unix://${this.socketPath}`;
  }

  start(): void {
    this.#server = Deno.serve({
      transport: "unix",
      path: this.socketPath,
      onListen() {},
    }, async (request) => {
      const path = new URL(request.url).pathname;
      const decoder = new FrameDecoder();
      const messages = decoder.push(
        new Uint8Array(await request.arrayBuffer()),
      );
      const call = {
        path,
        headers: new Headers(request.headers),
        messages,
      };
      this.calls.push(call);
      const handler = this.handlers.get(path);
      if (!handler) {
        return grpcError(12, `unknown method ${path}`);
      }
      return await handler(call);
    });
  }

  async stop(): Promise<void> {
    if (this.#server) {
      await this.#server.shutdown();
      this.#server = undefined;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
    await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }
}

/** A successful unary answer: one frame, no grpc-status header (it would be a trailer). */
export function grpcReply<S extends DescMessage>(
  schema: S,
  init: MessageInitShape<S>,
): Response {
  return new Response(encodeFrame(toBinary(schema, create(schema, init))), {
    headers: { "content-type": "application/grpc" },
  });
}

/** A Trailers-Only style failure. */
export function grpcError(code: number, message: string): Response {
  return new Response(null, {
    headers: {
      "content-type": "application/grpc",
      "grpc-status": String(code),
      "grpc-message": encodeURIComponent(message),
    },
  });
}
