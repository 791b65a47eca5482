import assert from "node:assert/strict";
import { errorMessage } from "./error_message.ts";

Deno.test("errorMessage() gives an Error's message and any other value as text", () => {
  assert.equal(errorMessage(new TypeError("bad field")), "bad field");
  assert.equal(errorMessage("plain text"), "plain text");
  assert.equal(errorMessage(42), "42");
  assert.equal(errorMessage(undefined), "undefined");
});
