/**
 * A tiny interpreter for the busybox command lines tests give containers and
 * exec calls (`sleep 3600`, `sh -c "echo hi; echo err >&2; exit 3"`), so the
 * same contract test behaves alike on the simulated runtime and containerd.
 * It models output, exit code and duration only; nothing is executed.
 */

/** What running a command line would produce. */
export interface ShellOutcome {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** How long it runs; `Infinity` for "until killed". */
  durationMs: number;
  /** Exit code after SIGTERM when the script traps it (`trap 'exit N' TERM`). */
  termExitCode?: number;
  /** True when the script ignores SIGTERM (`trap '' TERM`). */
  ignoresTerm?: boolean;
}

const QUIET_APPLETS = new Set([
  "cat",
  "env",
  "hostname",
  "id",
  "ls",
  "mkdir",
  "ps",
  "pwd",
  "rm",
  "touch",
  "uname",
  "httpd",
  "wait",
]);

/** Applies `trap ACTION SIGNAL...` for TERM to `out`. */
function applyTrap(args: string[], out: ShellOutcome): void {
  const [action = "", ...signals] = args;
  if (!signals.some((s) => s === "TERM" || s === "SIGTERM" || s === "15")) {
    return;
  }
  if (action === "") {
    out.ignoresTerm = true;
    return;
  }
  const exit = /exit\s+(\d+)/.exec(action);
  out.termExitCode = exit ? Number(exit[1]) : 0;
}

function tokenize(statement: string): string[] {
  const tokens: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const match of statement.matchAll(re)) {
    tokens.push(match[1] ?? match[2] ?? match[3] ?? "");
  }
  return tokens;
}

function seconds(arg: string | undefined): number {
  if (arg === undefined) return 0;
  if (arg === "inf" || arg === "infinity") return Infinity;
  const n = Number(arg);
  return Number.isFinite(n) && n >= 0 ? n * 1000 : 0;
}

/** Runs one simple command; `undefined` when the executable is unknown. */
function runSimple(argv: string[], out: ShellOutcome): boolean | undefined {
  const [cmd = "", ...args] = argv;
  const name = cmd.slice(cmd.lastIndexOf("/") + 1);
  let toStderr = false;
  const rest = args.filter((a) => {
    if (a === ">&2" || a === "1>&2") {
      toStderr = true;
      return false;
    }
    return true;
  });
  switch (name) {
    case "echo": {
      const text = `${rest.join(" ")}\n`;
      if (toStderr) out.stderr += text;
      else out.stdout += text;
      out.exitCode = 0;
      return true;
    }
    case "true":
    case ":":
      out.exitCode = 0;
      return true;
    case "false":
      out.exitCode = 1;
      return true;
    case "sleep":
      out.durationMs += seconds(rest[0]);
      out.exitCode = 0;
      return true;
    case "exit":
      out.exitCode = Number(rest[0] ?? out.exitCode) | 0;
      return false;
    case "sh":
      if (rest[0] === "-c") {
        const inner = interpretCommand(["sh", "-c", rest[1] ?? ""]);
        if (!inner) return undefined;
        out.stdout += inner.stdout;
        out.stderr += inner.stderr;
        out.exitCode = inner.exitCode;
        out.durationMs += inner.durationMs;
        return true;
      }
      out.exitCode = 0;
      return true;
    default:
      if (QUIET_APPLETS.has(name)) {
        out.exitCode = 0;
        if (name === "httpd" && !rest.includes("-f")) return true;
        if (name === "httpd") out.durationMs = Infinity;
        return true;
      }
      return undefined;
  }
}

/**
 * Interprets a command line. Returns `undefined` when its executable is not
 * one the sim knows (containerd would fail with "executable file not found").
 */
export function interpretCommand(argv: string[]): ShellOutcome | undefined {
  const out: ShellOutcome = {
    stdout: "",
    stderr: "",
    exitCode: 0,
    durationMs: 0,
  };
  const [cmd = "", flag, script] = argv;
  const name = cmd.slice(cmd.lastIndexOf("/") + 1);
  if (name === "sh" && flag === "-c") {
    for (const statement of (script ?? "").split(/;|&&|\n/)) {
      // `cmd & wait` runs cmd in the background and waits: same outcome here.
      const tokens = tokenize(statement.trim()).filter((t) => t !== "&");
      if (tokens.length === 0) continue;
      if (tokens[0] === "trap") {
        applyTrap(tokens.slice(1), out);
        continue;
      }
      const step = runSimple(tokens, out);
      if (step === undefined) {
        out.stderr += `sh: ${tokens[0]}: not found\n`;
        out.exitCode = 127;
        continue;
      }
      if (!step || out.durationMs === Infinity) break;
    }
    return out;
  }
  return runSimple(argv, out) === undefined ? undefined : out;
}
