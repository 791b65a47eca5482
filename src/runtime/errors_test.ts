import assert from "node:assert/strict";
import {
  AlreadyExistsError,
  CanceledError,
  DeadlineExceededError,
  GrpcCode,
  grpcCodeName,
  isAlreadyExists,
  isCanceled,
  isDeadlineExceeded,
  isNotFound,
  isUnavailable,
  isUnimplemented,
  NotFoundError,
  RuntimeError,
  runtimeErrorFromCode,
  RuntimeUnavailableError,
  UnimplementedError,
} from "./errors.ts";

Deno.test("runtimeErrorFromCode picks the specific class per code", () => {
  const table: Array<[number, new (...a: never[]) => RuntimeError]> = [
    [GrpcCode.NotFound, NotFoundError],
    [GrpcCode.AlreadyExists, AlreadyExistsError],
    [GrpcCode.DeadlineExceeded, DeadlineExceededError],
    [GrpcCode.Unavailable, RuntimeUnavailableError],
    [GrpcCode.Unimplemented, UnimplementedError],
    [GrpcCode.Canceled, CanceledError],
  ];
  for (const [code, cls] of table) {
    const error = runtimeErrorFromCode(code, "boom");
    assert.ok(error instanceof cls, `code ${code}`);
    assert.ok(error instanceof RuntimeError);
    assert.equal(error.code, code);
    assert.equal(error.grpcMessage, "boom");
  }
  const generic = runtimeErrorFromCode(GrpcCode.FailedPrecondition, "nope");
  assert.equal(generic.constructor, RuntimeError);
  assert.equal(generic.code, GrpcCode.FailedPrecondition);
});

Deno.test("unknown numeric codes become Unknown and keep the number", () => {
  const error = runtimeErrorFromCode(42, "odd");
  assert.equal(error.code, GrpcCode.Unknown);
  assert.match(error.grpcMessage, /grpc-status 42/);
  assert.equal(grpcCodeName(42), "Code(42)");
  assert.equal(grpcCodeName(5), "NotFound");
});

Deno.test("RuntimeError message names method and code, keeps cause", () => {
  const cause = new Error("socket gone");
  const error = new NotFoundError('sandbox "x" not found', {
    method: "/runtime.v1.RuntimeService/PodSandboxStatus",
    cause,
  });
  assert.equal(
    error.message,
    'CRI call /runtime.v1.RuntimeService/PodSandboxStatus failed: NotFound: sandbox "x" not found',
  );
  assert.equal(error.cause, cause);
  assert.equal(error.name, "NotFoundError");
  assert.equal(error.method, "/runtime.v1.RuntimeService/PodSandboxStatus");
});

Deno.test("isX helpers match only their code", () => {
  const helpers = [
    [isNotFound, GrpcCode.NotFound],
    [isAlreadyExists, GrpcCode.AlreadyExists],
    [isDeadlineExceeded, GrpcCode.DeadlineExceeded],
    [isUnavailable, GrpcCode.Unavailable],
    [isUnimplemented, GrpcCode.Unimplemented],
    [isCanceled, GrpcCode.Canceled],
  ] as const;
  for (const [helper, code] of helpers) {
    assert.equal(helper(runtimeErrorFromCode(code, "x")), true);
    assert.equal(helper(runtimeErrorFromCode(GrpcCode.Internal, "x")), false);
    assert.equal(helper(new Error("NotFound")), false);
    assert.equal(helper(undefined), false);
  }
  // a plain RuntimeError constructed with the code counts too
  assert.equal(isNotFound(new RuntimeError(GrpcCode.NotFound, "x")), true);
});
