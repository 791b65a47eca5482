import assert from "node:assert/strict";
import { createFeatureGates } from "../features/mod.ts";
import {
  ConfigError,
  decodeKubeletConfiguration,
  validateKubeletConfiguration,
} from "./mod.ts";
import { generateFuzzInputs } from "./testing.ts";

Deno.test("decodeKubeletConfiguration() never crashes on 300 mutated documents", async () => {
  const inputs = generateFuzzInputs(300, 7);
  const gates = createFeatureGates();
  let rejected = 0;
  for (const input of inputs) {
    let config;
    try {
      config = await decodeKubeletConfiguration(input.text, {
        logger: { info() {} },
      });
    } catch (err) {
      assert.ok(err instanceof ConfigError, `${input.kind}: ${err}`);
      assert.ok(!err.message.includes("\n"), `one line: ${err.message}`);
      rejected++;
      continue;
    }
    // Whatever decodes must validate without throwing.
    validateKubeletConfiguration(config, gates);
  }
  assert.ok(rejected > 30, `rejected ${rejected}`);
  assert.ok(rejected < inputs.length, "some inputs decode");
});

Deno.test("decodeKubeletConfiguration() names the mutated field when it rejects a type mutation", async () => {
  for (const input of generateFuzzInputs(300, 11)) {
    if (input.kind !== "type" || input.field === undefined) continue;
    try {
      await decodeKubeletConfiguration(input.text);
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      if (err.field === "featureGates") continue;
      assert.ok(
        err.field?.startsWith(input.field.split(".")[0] as string),
        `${input.field} → ${err.field}: ${err.message}`,
      );
      assert.ok(err.message.includes(`field ${err.field}`), err.message);
    }
  }
});

Deno.test("decodeKubeletConfiguration() rejects every alias bomb", async () => {
  const bombs = generateFuzzInputs(3000, 3).filter((i) => i.kind === "alias");
  assert.ok(bombs.length > 10);
  for (const bomb of bombs) {
    try {
      await decodeKubeletConfiguration(bomb.text);
    } catch (err) {
      assert.match((err as Error).message, /alias bomb|unknown field|field x/);
    }
  }
});
