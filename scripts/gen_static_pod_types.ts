/**
 * Regenerates src/static_pod/gen/go_types.ts (the Go type table of core.Pod and v1.Pod) from
 * upstream's Go types through the static pod oracle (peers/staticpod `types`).
 *
 *   deno task gen-static-pod-types
 *
 * @module
 */

const here = new URL("..", import.meta.url).pathname;
const run = async (cmd: string, args: string[]) => {
  const out = await new Deno.Command(cmd, {
    args,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed`);
  }
  return new TextDecoder().decode(out.stdout);
};
const oracle = (await run("bash", [`${here}scripts/peers.sh`, "static-oracle"]))
  .trim();
const target = `${here}src/static_pod/gen/go_types.ts`;
await Deno.writeTextFile(target, await run(oracle, ["types"]));
await run(Deno.execPath(), ["fmt", target]);
