/**
 * The state file upstream keeps in the root dir (`graceful_node_shutdown_state`): when the last
 * shutdown started and ended, JSON, replaced atomically (a temporary file renamed over it).
 *
 * @module
 */
import { SHUTDOWN_STATE_FILE, type ShutdownState } from "./shutdown_plan.ts";

/** Writes `state` to `<rootDir>/graceful_node_shutdown_state` (mode 0644). */
export async function storeShutdownState(
  rootDir: string,
  state: ShutdownState,
): Promise<void> {
  const path = `${rootDir}/${SHUTDOWN_STATE_FILE}`;
  const temporary =
    `${rootDir}/.tmp-${SHUTDOWN_STATE_FILE}-${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(temporary, JSON.stringify(state), { mode: 0o644 });
    await Deno.chmod(temporary, 0o644);
    await Deno.rename(temporary, path);
  } catch (cause) {
    await Deno.remove(temporary).catch(() => {});
    throw new Error(`Cannot write the shutdown state file "${path}"`, {
      cause,
    });
  }
}

/** Reads the state file; undefined when there is none. */
export async function loadShutdownState(
  rootDir: string,
): Promise<ShutdownState | undefined> {
  const path = `${rootDir}/${SHUTDOWN_STATE_FILE}`;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ShutdownState>;
    return {
      startTime: String(parsed.startTime ?? ""),
      endTime: String(parsed.endTime ?? ""),
    };
  } catch (cause) {
    throw new SyntaxError(`The shutdown state file "${path}" is not JSON`, {
      cause,
    });
  }
}
