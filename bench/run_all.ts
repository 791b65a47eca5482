/**
 * `deno task bench`: runs every `bench/*_bench.ts` in one go, one after the
 * other (each bench interleaves its own comparisons), and prints their output.
 */
const dir = new URL(".", import.meta.url).pathname;
const only = Deno.args[0];
const benches = [...Deno.readDirSync(dir)]
  .map((e) => e.name)
  .filter((n) => n.endsWith("_bench.ts") && (!only || n.includes(only)))
  .sort();
let failed = 0;
for (const name of benches) {
  // deno-lint-ignore no-console
  console.log(`\n=== ${name} ===`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", `${dir}${name}`],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) {
    failed++;
    // deno-lint-ignore no-console
    console.log(`${name} exited with code ${code}`);
  }
}
Deno.exit(failed === 0 ? 0 : 1);
