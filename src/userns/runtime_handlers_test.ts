import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { FakeClock } from "../clock/testing.ts";
import { StatusResponseSchema } from "../runtime/mod.ts";
import { handlersOf, statusHandlerSource } from "./runtime_handlers.ts";

const status = (userNamespaces: boolean) =>
  create(StatusResponseSchema, {
    runtimeHandlers: [
      { name: "", features: { userNamespaces } },
      { name: "runc", features: { userNamespaces } },
      { name: "bare" },
    ],
  });

Deno.test("handlersOf(): each handler's user namespace support", () => {
  assert.deepEqual(handlersOf(status(true)), [
    { name: "", userNamespaces: true },
    { name: "runc", userNamespaces: true },
    { name: "bare", userNamespaces: false },
  ]);
  assert.deepEqual(handlersOf(create(StatusResponseSchema, {})), []);
});

Deno.test("statusHandlerSource(): one Status call per 5 s", async () => {
  const clock = new FakeClock();
  const answers = [status(false), status(true)];
  let calls = 0;
  const source = statusHandlerSource(() => {
    calls++;
    return Promise.resolve(answers.shift()!);
  }, clock);
  assert.equal((await source.handlers())[0]?.userNamespaces, false);
  await clock.advance(4_999);
  assert.equal((await source.handlers())[0]?.userNamespaces, false);
  assert.equal(calls, 1);
  await clock.advance(1);
  assert.equal((await source.handlers())[0]?.userNamespaces, true);
  assert.equal(calls, 2);
});
