/**
 * `deno task bundle [--out=<file>] [--entry=<file>] [--permissions-from
 * <kubelet-config.yaml>] [--api-server host:port] [kubelet flags…]`
 *
 * Bundles `main.ts` (and the npm packages it uses) into one JavaScript file,
 * `dist/kubelet.js` by default, with `deno bundle` (works offline once
 * `deno install` has filled node_modules/ and DENO_DIR). Prints the
 * `deno run --no-prompt <lists> dist/kubelet.js` command that runs it with
 * the same permission lists `deno task compile` bakes into the binary.
 * @module
 */
import { dirname, join } from "node:path";
import {
  parseListsArgs,
  planFor,
  runtimeFlags,
  UsageError,
} from "./permission_lists.ts";

/** The repository root. */
export const ROOT = new URL("..", import.meta.url).pathname;

function say(text: string): void {
  // deno-lint-ignore no-console
  console.log(text);
}

function fail(text: string): never {
  // deno-lint-ignore no-console
  console.error(`error: ${text}`);
  Deno.exit(1);
}

/** The `deno bundle` argument list for `entry` → `out`. */
export function bundleArgs(entry: string, out: string): string[] {
  return ["bundle", "--platform", "deno", "--output", out, entry];
}

async function main(): Promise<number> {
  const { request, rest } = parseListsArgs(Deno.args, {
    valued: ["--out", "--entry"],
  });
  let out = join(ROOT, "dist", "kubelet.js");
  let entry = join(ROOT, "main.ts");
  for (const arg of rest) {
    const [name, value] = arg.split(/=(.*)/s);
    if (name === "--out" && value) out = value;
    else if (name === "--entry" && value) entry = value;
    else {
      throw new UsageError(
        `Invalid option "${arg}"; use --out=<file>, --entry=<file>, --permissions-from <file>, --api-server host:port or kubelet flags`,
      );
    }
  }
  const flags = runtimeFlags(await planFor(request, Deno.cwd()));
  if (!await bundle(entry, out)) return 1;
  say(`run it with: deno run ${flags.join(" ")} ${out} --config <file>`);
  return 0;
}

/**
 * Bundles `entry` into the single file `out` (offline once deno install and
 * one online bundle have filled the caches). Reports and returns false on
 * failure.
 */
export async function bundle(entry: string, out: string): Promise<boolean> {
  await Deno.mkdir(dirname(out), { recursive: true });
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: bundleArgs(entry, out),
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) {
    say(`deno bundle failed with exit code ${code}`);
    return false;
  }
  const size = (await Deno.stat(out)).size;
  say(`wrote ${out} (${(size / 1024).toFixed(0)} KiB)`);
  return true;
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    fail((error as Error).message);
  }
}
