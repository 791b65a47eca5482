/**
 * kubelet.ts entry point: the composition root only. It parses the command
 * line, loads and validates the configuration (all inside `runCommand`), and
 * only then loads the runtime and pod code, so `--help`, `--version` and
 * `--dry-run` stay light.
 * @module
 */
import { type CommandPermissions, runCommand } from "./src/cli/mod.ts";

const encoder = new TextEncoder();

function writer(stream: { writeSync(p: Uint8Array): number }) {
  return (text: string): void => {
    const bytes = encoder.encode(text);
    let written = 0;
    while (written < bytes.length) {
      written += stream.writeSync(bytes.subarray(written));
    }
  };
}

// Loaded only once a configuration exists, so --help and --version stay light.
const permissions: CommandPermissions = {
  flagsFor: async (ctx) =>
    (await import("./src/permissions/mod.ts")).permissionsHook.flagsFor(ctx),
  check: async (ctx) =>
    await (await import("./src/permissions/mod.ts")).permissionsHook.check(ctx),
};

const code = await runCommand(Deno.args, {
  stdout: writer(Deno.stdout),
  stderr: writer(Deno.stderr),
  permissions,
  start: async (ctx) => {
    const { runKubelet } = await import("./src/kubelet/run_kubelet.ts");
    return await runKubelet(ctx);
  },
});
Deno.exit(code);
