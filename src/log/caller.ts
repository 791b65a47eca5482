const FRAME_REGEXP = /\(?(?:file:\/\/)?(\/[^()\s]+):(\d+):\d+\)?$/;
// Frames of the logger itself are skipped; its own tests are callers like any other.
const INTERNAL_REGEXP = /\/src\/log\/(?!.*_test\.ts$)[^/]+$/;

/**
 * The `file.ts:line` of the first stack frame outside `src/log`, found from an
 * Error stack. Only called for records that are actually written.
 */
export function callerOf(stack: string | undefined): string {
  if (!stack) return "???:0";
  for (const raw of stack.split("\n").slice(1)) {
    const match = FRAME_REGEXP.exec(raw.trim());
    if (!match) continue;
    const file = match[1]!;
    if (INTERNAL_REGEXP.test(file)) continue;
    const base = file.slice(file.lastIndexOf("/") + 1);
    return `${base}:${match[2]}`;
  }
  return "???:0";
}

/** Turns a vmodule glob (`pod_*`, `sync?loop`) into a regexp on the file's base name. */
export function vmodulePattern(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`);
}
