/**
 * Runs `mount(8)` or `umount(8)` (Deno has no mount call) and turns a failure into an error
 * that names the command and what it printed.
 *
 * @module
 */

/** Runs `command args`; rejects with its stderr (or exit code) when it fails. */
export async function runMountCommand(
  command: "mount" | "umount",
  args: string[],
): Promise<void> {
  const out = await new Deno.Command(command, {
    args,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `${command} ${args.join(" ")}: ${
        new TextDecoder().decode(out.stderr).trim() || `exit ${out.code}`
      }`,
    );
  }
}
