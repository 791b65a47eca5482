import assert from "node:assert/strict";
import { CONFIG_SHAPE } from "./config_shape.ts";
import { KubeletConfigurationSchema } from "./schema.ts";
import { objectShapeOf } from "./shape_from_schema.ts";

Deno.test("config_shape.ts matches the zod schema (run scripts/gen_config_shape.ts after schema changes)", () => {
  assert.deepStrictEqual(
    objectShapeOf(KubeletConfigurationSchema),
    CONFIG_SHAPE,
    "config_shape.ts is stale: deno run -A scripts/gen_config_shape.ts",
  );
});
