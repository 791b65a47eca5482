/**
 * Regenerates `src/config/config_shape.ts` from the zod schema in
 * `src/config/schema.ts`. Run after changing the schema:
 * `deno run --allow-read --allow-write --allow-run=deno scripts/gen_config_shape.ts`
 * (`config_shape_test.ts` fails until the two agree).
 * @module
 */
import { renderConfigShapeModule } from "../src/config/shape_module.ts";

const target = new URL("../src/config/config_shape.ts", import.meta.url);
await Deno.writeTextFile(target, renderConfigShapeModule());
const fmt = await new Deno.Command(Deno.execPath(), {
  args: ["fmt", target.pathname],
}).output();
if (!fmt.success) {
  throw new Error(new TextDecoder().decode(fmt.stderr));
}
// deno-lint-ignore no-console
console.log(`wrote ${target.pathname}`);
