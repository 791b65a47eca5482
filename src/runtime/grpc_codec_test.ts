import assert from "node:assert/strict";
import { GrpcCode, RuntimeError } from "./errors.ts";
import {
  decodeGrpcMessage,
  encodeFrame,
  formatGrpcTimeout,
  FrameDecoder,
  grpcCodeFromHttpStatus,
  parseCriEndpoint,
  unaryMessage,
} from "./grpc_codec.ts";

Deno.test("encodeFrame writes flag 0 and a big-endian length", () => {
  const frame = encodeFrame(new Uint8Array([7, 8, 9]));
  assert.deepEqual([...frame], [0, 0, 0, 0, 3, 7, 8, 9]);
  const big = encodeFrame(new Uint8Array(0x010203));
  assert.deepEqual([...big.subarray(0, 5)], [0, 0, 0x01, 0x02, 0x03]);
});

Deno.test("FrameDecoder splits concatenated frames and keeps partial ones", () => {
  const a = encodeFrame(new Uint8Array([1, 2]));
  const b = encodeFrame(new Uint8Array([]));
  const c = encodeFrame(new Uint8Array([3, 4, 5]));
  const all = new Uint8Array([...a, ...b, ...c]);
  const decoder = new FrameDecoder();
  // feed byte by byte: frames only come out once complete
  const out: number[][] = [];
  for (const byte of all) {
    for (const m of decoder.push(new Uint8Array([byte]))) out.push([...m]);
  }
  assert.deepEqual(out, [[1, 2], [], [3, 4, 5]]);
  assert.equal(decoder.pendingBytes, 0);
  assert.deepEqual(decoder.push(all.subarray(0, 6)).length, 0);
  assert.equal(decoder.pendingBytes, 6);
});

Deno.test("FrameDecoder rejects oversized and compressed frames", () => {
  const decoder = new FrameDecoder({ maxMessageBytes: 4 });
  assert.throws(
    () => decoder.push(encodeFrame(new Uint8Array(5))),
    (e: unknown) =>
      e instanceof RuntimeError && e.code === GrpcCode.ResourceExhausted &&
      /5 vs\. 4/.test(e.message),
  );
  const compressed = encodeFrame(new Uint8Array([1]));
  compressed[0] = 1;
  assert.throws(
    () => new FrameDecoder().push(compressed),
    (e: unknown) => e instanceof RuntimeError && e.code === GrpcCode.Internal,
  );
});

Deno.test("unaryMessage returns the one message as a view of the body", () => {
  const body = encodeFrame(new Uint8Array([4, 5, 6]));
  const message = unaryMessage(body);
  assert.deepEqual([...message], [4, 5, 6]);
  assert.equal(message.buffer, body.buffer);
  assert.equal(unaryMessage(encodeFrame(new Uint8Array(0))).length, 0);
  assert.equal(
    unaryMessage(encodeFrame(new Uint8Array(4)), { maxMessageBytes: 4 })
      .length,
    4,
  );
});

Deno.test("unaryMessage rejects bodies that are not exactly one frame", () => {
  const one = encodeFrame(new Uint8Array([1]));
  const compressed = encodeFrame(new Uint8Array([1]));
  compressed[0] = 1;
  const cases: Array<[string, Uint8Array, number, RegExp, number?]> = [
    ["empty", new Uint8Array(0), GrpcCode.Unknown, /no message/],
    ["two", new Uint8Array([...one, ...one]), GrpcCode.Internal, /2 message/],
    ["truncated", one.subarray(0, 5), GrpcCode.Internal, /5 stray/],
    ["trailing", new Uint8Array([...one, 0]), GrpcCode.Internal, /1 stray/],
    ["compressed", compressed, GrpcCode.Internal, /compressed/],
    ["oversized", one, GrpcCode.ResourceExhausted, /1 vs\. 0/, 0],
  ];
  for (const [name, body, code, text, maxMessageBytes] of cases) {
    assert.throws(
      () =>
        unaryMessage(body, {
          method: "/m",
          ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
        }),
      (e: unknown) => {
        assert.ok(e instanceof RuntimeError, name);
        assert.equal(e.code, code, name);
        assert.match(e.grpcMessage, text, name);
        return true;
      },
    );
  }
});

Deno.test("formatGrpcTimeout picks the finest unit within 8 digits and rounds up", () => {
  assert.equal(formatGrpcTimeout(0), "0n");
  assert.equal(formatGrpcTimeout(1), "1000000n");
  assert.equal(formatGrpcTimeout(0.0015), "1500n");
  assert.equal(formatGrpcTimeout(99), "99000000n");
  assert.equal(formatGrpcTimeout(100), "100000u");
  assert.equal(formatGrpcTimeout(120_000), "120000m");
  assert.equal(formatGrpcTimeout(100_000_000), "100000S");
  assert.equal(formatGrpcTimeout(100_000_000_000), "1666667M");
  assert.equal(formatGrpcTimeout(1e13), "2777778H");
  assert.equal(formatGrpcTimeout(1e16), "99999999H");
  for (const value of [5, 777, 120_000, 3.6e9, 1e13]) {
    assert.match(formatGrpcTimeout(value), /^\d{1,8}[numSMH]$/);
  }
  assert.throws(() => formatGrpcTimeout(-1), RangeError);
  assert.throws(() => formatGrpcTimeout(Number.NaN), RangeError);
});

Deno.test("decodeGrpcMessage percent-decodes UTF-8 and tolerates junk", () => {
  assert.equal(decodeGrpcMessage("not%20found"), "not found");
  assert.equal(decodeGrpcMessage("caf%C3%A9 %E2%9C%93"), "café ✓");
  assert.equal(decodeGrpcMessage("100%"), "100%");
  assert.equal(decodeGrpcMessage("%zz%4"), "%zz%4");
  assert.equal(decodeGrpcMessage("plain: text"), "plain: text");
});

Deno.test("grpcCodeFromHttpStatus follows the gRPC HTTP mapping", () => {
  assert.equal(grpcCodeFromHttpStatus(400), GrpcCode.Internal);
  assert.equal(grpcCodeFromHttpStatus(401), GrpcCode.Unauthenticated);
  assert.equal(grpcCodeFromHttpStatus(403), GrpcCode.PermissionDenied);
  assert.equal(grpcCodeFromHttpStatus(404), GrpcCode.Unimplemented);
  for (const s of [429, 502, 503, 504]) {
    assert.equal(grpcCodeFromHttpStatus(s), GrpcCode.Unavailable);
  }
  assert.equal(grpcCodeFromHttpStatus(500), GrpcCode.Unknown);
});

Deno.test("parseCriEndpoint accepts unix:///p, unix:/p and /p", () => {
  assert.equal(
    parseCriEndpoint("unix:///run/containerd/containerd.sock"),
    "/run/containerd/containerd.sock",
  );
  assert.equal(
    parseCriEndpoint("unix:/run/crio/crio.sock"),
    "/run/crio/crio.sock",
  );
  assert.equal(parseCriEndpoint("/tmp/x.sock"), "/tmp/x.sock");
  assert.equal(parseCriEndpoint("  unix:///a.sock "), "/a.sock");
});

Deno.test("parseCriEndpoint rejects other forms naming the flag and the fix", () => {
  const cases: Array<[string, RegExp]> = [
    ["tcp://127.0.0.1:1234", /scheme "tcp" is not supported/],
    ["npipe:////./pipe/containerd", /scheme "npipe"/],
    ["unix://relative.sock", /absolute path/],
    ["unix:relative.sock", /must be absolute/],
    ["relative.sock", /absolute socket path/],
    ["", /empty/],
  ];
  for (const [input, why] of cases) {
    assert.throws(() => parseCriEndpoint(input), (e: unknown) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, /--container-runtime-endpoint/);
      assert.match(e.message, why);
      assert.match(e.message, /unix:\/\/\/run\/containerd\/containerd\.sock/);
      return true;
    });
  }
  assert.throws(
    () => parseCriEndpoint("tcp://x", { flag: "--image-service-endpoint" }),
    /Invalid --image-service-endpoint "tcp:\/\/x"/,
  );
});
