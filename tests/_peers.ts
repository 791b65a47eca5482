/**
 * The test peers as the tests find them: `scripts/peers.sh <target>`'s one line of output (a
 * directory or a binary), or undefined when the target is not built or fails.
 *
 * @module
 */

const PEERS_SCRIPT = new URL("../scripts/peers.sh", import.meta.url).pathname;

/** What `bash scripts/peers.sh <target>` prints, trimmed; undefined when it fails. */
export async function peersOutput(target: string): Promise<string | undefined> {
  const out = await new Deno.Command("bash", {
    args: [PEERS_SCRIPT, target],
    stdout: "piped",
    stderr: "null",
  }).output();
  return out.code === 0
    ? new TextDecoder().decode(out.stdout).trim()
    : undefined;
}
