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

let mountQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs `fn` after every mount-table change queued before it, process-wide: each executor checks
 * the mount table after its own mount and takes off what it does not recognise, so no other
 * mount may land in between.
 */
export function inMountOrder<T>(fn: () => Promise<T>): Promise<T> {
  const next = mountQueue.then(fn);
  mountQueue = next.catch(() => {});
  return next;
}
